"""Screen regions with mss: the only module that imports it.

mss grabs a region directly on every platform (on macOS pyscreeze grabs the
whole screen and crops). An mss instance holds a connection to the display
and is not safe to share between threads, so each thread gets its own.
"""

from __future__ import annotations

import sys
import threading

import mss
from mss.exception import ScreenShotError


class CaptureError(RuntimeError):
    """The region could not be grabbed."""


class RegionCapture:
    """Grabs (left, top, right, bottom) boxes of one display as (width, height, RGB bytes)."""

    def __init__(self, display=""):
        self.display = display
        self._local = threading.local()

    def grab(self, bbox):
        left, top, right, bottom = bbox
        try:
            shot = self._screen().grab({"left": left, "top": top, "width": right - left, "height": bottom - top})
        except ScreenShotError as error:
            raise CaptureError(" ".join(str(error).split())) from None
        return shot.size.width, shot.size.height, shot.rgb

    def _screen(self):
        screen = getattr(self._local, "screen", None)
        if screen is None:
            on_x11 = sys.platform.startswith("linux") and self.display
            screen = self._local.screen = mss.MSS(**({"display": self.display} if on_x11 else {}))
        return screen
