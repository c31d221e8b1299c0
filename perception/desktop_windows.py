"""Game windows on Windows and macOS, through pygetwindow.

The only module that imports pygetwindow, which has no Linux backend (Linux
uses perception/x11.py). Its macOS support is partial: where it cannot list
windows, the error says so.
"""

from __future__ import annotations

import pygetwindow

from perception.window import Window, WindowError


def list_shown_windows(display=None) -> list[Window]:
    """Titled windows that are visible or minimized; `display` is unused here."""
    try:
        windows = pygetwindow.getAllWindows()
    except (NotImplementedError, AttributeError):  # macOS: not written, or not there at all
        raise WindowError(
            "pygetwindow cannot list windows on this platform; "
            "see the README's platform notes for Unity mode"
        ) from None
    return [
        Window(_handle(window), window.title, window.left, window.top, window.width, window.height, window.isMinimized)
        for window in windows
        if window.title and (window.visible or window.isMinimized)
    ]


def _handle(window):
    return int(getattr(window, "_hWnd", 0) or id(window))


def _live(window):
    for candidate in pygetwindow.getAllWindows():
        if _handle(candidate) == window.id:
            return candidate
    return None


def focus_window(window):
    live = _live(window)
    if live is None:
        raise WindowError(f"cannot focus the window {window.title!r}: it is gone")
    live.activate()


def has_focus(window) -> bool:
    active = pygetwindow.getActiveWindow()
    return active is not None and _handle(active) == window.id


def window_exists(window) -> bool:
    return _live(window) is not None
