"""Screenshots of a screen region with Pillow's ImageGrab.

The only module that imports Pillow. pyautogui's own screenshot needs scrot and
an X11 session variable on Linux; ImageGrab grabs over XCB directly, and is what
pyautogui uses on Windows and macOS.
"""

from __future__ import annotations

import os
import sys

from PIL import ImageGrab


def save_screenshot(bbox, path, display=""):
    """Grab (left, top, right, bottom) of the screen and write it as PNG to `path`, atomically."""
    options = {"xdisplay": display or None} if sys.platform.startswith("linux") else {}
    image = ImageGrab.grab(bbox=bbox, **options)
    partial = f"{path}.partial"
    image.save(partial, format="PNG")
    os.replace(partial, path)
