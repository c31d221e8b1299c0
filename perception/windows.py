"""Game windows on any platform: find one by title, whatever the window system.

Linux reads windows through X11 (perception/x11.py); Windows and macOS through
PyWinCtl (perception/desktop_windows.py). Both list the shown windows, focus
one, and tell whether it still has the keyboard or still exists.
"""

from __future__ import annotations

import re
import sys

from perception.window import Window, WindowError

TITLES_SHOWN = 10


def window_system():
    """The module that lists, focuses and checks windows on this platform."""
    if sys.platform.startswith("linux"):
        from perception import x11

        return x11
    from perception import desktop_windows

    return desktop_windows


def find_window(title_regex, display=None, system=None) -> Window:
    """The one shown window whose title matches `title_regex` (re.search); else WindowError."""
    system = system or window_system()
    pattern = re.compile(title_regex)
    windows = system.list_shown_windows(display)
    matches = [window for window in windows if pattern.search(window.title)]
    if not matches:
        titles = sorted({window.title for window in windows})
        listed = ", ".join(repr(title) for title in titles[:TITLES_SHOWN])
        more = f" and {len(titles) - TITLES_SHOWN} more" if len(titles) > TITLES_SHOWN else ""
        raise WindowError(f"no shown window's title matches {title_regex!r}; the titles are: {listed or 'none'}{more}")
    if len(matches) > 1:
        listed = ", ".join(f"{window.title!r} (id {window.id:#x})" for window in matches)
        raise WindowError(
            f"{len(matches)} shown windows match {title_regex!r}: {listed}: close one, or give a title only one matches"
        )
    window = matches[0]
    if window.minimized:
        raise WindowError(f"the window {window.title!r} is minimized: restore it first")
    if window.zero_sized:
        raise WindowError(f"the window {window.title!r} is {window.width}x{window.height}: it shows nothing")
    return window
