"""A top-level window, as the window systems (perception/x11.py, perception/desktop_windows.py) list it."""

from __future__ import annotations

from dataclasses import dataclass

MIN_SIDE = 2  # X windows are at least 1x1; a side this small shows nothing


class WindowError(Exception):
    """A window that cannot be found or used; the message is one line."""


@dataclass(frozen=True)
class Window:
    """A top-level window as it was when listed; x, y are in screen coordinates."""

    id: int
    title: str
    x: int
    y: int
    width: int
    height: int
    minimized: bool = False
    display: str = ""  # the X display on Linux; empty elsewhere

    @property
    def zero_sized(self):
        return self.width < MIN_SIDE or self.height < MIN_SIDE

    @property
    def bbox(self):
        """(left, top, right, bottom), as Pillow's ImageGrab.grab takes it."""
        return (self.x, self.y, self.x + self.width, self.y + self.height)
