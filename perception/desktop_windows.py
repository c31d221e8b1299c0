"""Game windows on Windows and macOS, through PyWinCtl: the only module that imports it.

Linux uses perception/x11.py instead: PyWinCtl lists only the windows a
window manager reports (none under a bare X server such as Xvfb), and its
python-xlib shares the `Xlib` package with pyautogui's python3-xlib, so
installing both on Linux mixes two versions' files.
On macOS, listing other apps' windows needs the Accessibility permission, and
their titles the Screen Recording permission; when either is missing, the
error says which.
"""

from __future__ import annotations

import sys

import pywinctl

from perception.window import Window, WindowError

MACOS_PERMISSIONS = (
    "on macOS, allow the terminal that runs the agents in System Settings > Privacy & Security: "
    "Accessibility (to list and focus windows) and Screen Recording (to read their titles)"
)


def list_shown_windows(display=None) -> list[Window]:
    """Titled windows that are visible or minimized; `display` is unused here."""
    try:
        windows = pywinctl.getAllWindows()
    except Exception as error:  # whatever the platform's API raised: said in one line
        raise WindowError(f"cannot list the windows ({' '.join(str(error).split())}){_hint()}") from None
    listed = [_window(window) for window in windows]
    shown = [window for window, raw in zip(listed, windows) if window.title and (raw.isVisible or window.minimized)]
    if sys.platform == "darwin" and windows and not any(window.title for window in listed):
        raise WindowError(f"every window's title is hidden from this program{_hint()}")
    return shown


def _window(raw) -> Window:
    return Window(
        int(raw.getHandle() or id(raw)),
        raw.title or "",
        raw.left,
        raw.top,
        raw.width,
        raw.height,
        bool(raw.isMinimized),
    )


def _hint():
    return f": {MACOS_PERMISSIONS}" if sys.platform == "darwin" else ""


def _live(window):
    for candidate in pywinctl.getAllWindows():
        if int(candidate.getHandle() or id(candidate)) == window.id:
            return candidate
    return None


def focus_window(window):
    live = _live(window)
    if live is None:
        raise WindowError(f"cannot focus the window {window.title!r}: it is gone")
    if not live.activate(wait=True):
        raise WindowError(f"cannot focus the window {window.title!r}{_hint()}")


def has_focus(window) -> bool:
    active = pywinctl.getActiveWindow()
    return active is not None and int(active.getHandle() or id(active)) == window.id


def window_exists(window) -> bool:
    return _live(window) is not None
