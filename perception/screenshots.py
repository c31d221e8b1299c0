"""Screenshots of a screen region with Pillow's ImageGrab.

The only module that imports Pillow. pyautogui's own screenshot needs scrot and
an X11 session variable on Linux; ImageGrab grabs over XCB directly, and is what
pyautogui uses on Windows and macOS.
"""

from __future__ import annotations

import base64
import io
import os
import sys

from PIL import Image, ImageGrab


def save_screenshot(bbox, path, display=""):
    """Grab (left, top, right, bottom) of the screen and write it as PNG to `path`, atomically."""
    options = {"xdisplay": display or None} if sys.platform.startswith("linux") else {}
    image = ImageGrab.grab(bbox=bbox, **options)
    partial = f"{path}.partial"
    image.save(partial, format="PNG")
    os.replace(partial, path)


def thumbnail_data_uri(path, width=320):
    """The screenshot at `path`, scaled to `width` pixels wide, as a JPEG data: URI a page can embed."""
    with Image.open(path) as image:
        image = image.convert("RGB")
        image.thumbnail((width, width * image.height // max(image.width, 1) or 1))
        encoded = io.BytesIO()
        image.save(encoded, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(encoded.getvalue()).decode("ascii")
