"""Game windows on X11 (Linux): find them by title, focus them, check them.

The only module that imports python-xlib. PyWinCtl lists only what a window
manager reports (nothing under a bare Xvfb), and `xdotool search --name` misses SDL's UTF-8 titles, so titles are read here from
_NET_WM_NAME (UTF-8), else WM_NAME. Every call opens its own short connection
to $DISPLAY, so nothing is shared between threads.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from Xlib import X, Xatom
from Xlib.display import Display
from Xlib.error import (
    BadDrawable,
    BadMatch,
    BadWindow,
    CatchError,
    DisplayError,
    XauthError,
)

from perception.window import Window, WindowError

ICONIC_STATE = 3  # ICCCM WM_STATE of a minimized window


@contextmanager
def _connect(display=None):
    name = display or os.environ.get("DISPLAY")
    if not name:
        raise WindowError("no display: set DISPLAY to the X display the game runs on (e.g. DISPLAY=:0)")
    try:
        connection = Display(name)
    except (DisplayError, XauthError, OSError) as error:
        problem = " ".join(str(error).split())
        raise WindowError(
            f"no display: cannot open X display {name!r} ({problem}); "
            "set DISPLAY (and XAUTHORITY) to a running X server"
        ) from None
    try:
        yield connection
    finally:
        connection.close()


def list_shown_windows(display=None) -> list[Window]:
    """Titled windows that are on screen, or minimized; hidden helper windows are left out."""
    with _connect(display) as connection:
        root = connection.screen().root
        name = connection.get_display_name()
        return [window for window in _titled_windows(connection, root, root, name) if window]


def _titled_windows(connection, root, parent, display_name):
    """The titled windows under `parent`; their own children are toolkit internals."""
    try:
        children = parent.query_tree().children
    except (BadWindow, BadDrawable):
        return  # it was destroyed while we looked
    for child in children:
        try:
            title = _title(connection, child)
            if title is None:
                yield from _titled_windows(connection, root, child, display_name)
            else:
                yield _shown_window(connection, root, child, title, display_name)
        except (BadWindow, BadDrawable):
            continue


def _title(connection, window):
    utf8 = window.get_full_property(connection.intern_atom("_NET_WM_NAME"), connection.intern_atom("UTF8_STRING"))
    if utf8 is not None:
        return _text(utf8.value, "utf-8")
    legacy = window.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
    if legacy is not None:
        return _text(legacy.value, "latin-1")  # STRING is Latin-1 by the ICCCM
    return None


def _text(value, encoding):
    return value.decode(encoding, "replace") if isinstance(value, bytes) else str(value)


def _shown_window(connection, root, window, title, display_name):
    """A Window for a viewable or minimized window; None for hidden (unmapped) ones."""
    viewable = window.get_attributes().map_state == X.IsViewable
    state = window.get_full_property(connection.intern_atom("WM_STATE"), X.AnyPropertyType)
    minimized = not viewable and state is not None and state.value[0] == ICONIC_STATE
    if not viewable and not minimized:
        return None
    geometry = window.get_geometry()
    origin = root.translate_coords(window, 0, 0)
    return Window(
        window.id,
        title,
        origin.x,
        origin.y,
        geometry.width,
        geometry.height,
        minimized,
        display_name,
    )


def focus_window(window):
    """Raises `window` and gives it the keyboard; needs no window manager."""
    with _connect(window.display) as connection:
        target = connection.create_resource_object("window", window.id)
        failed = CatchError(BadWindow, BadMatch)
        target.configure(stack_mode=X.Above, onerror=failed)
        target.set_input_focus(X.RevertToParent, X.CurrentTime, onerror=failed)
        connection.sync()
        if failed.get_error():
            raise WindowError(f"cannot focus the window {window.title!r}: it is gone or no longer shown")


def has_focus(window) -> bool:
    """Whether the keyboard goes to `window` or one of its child windows."""
    with _connect(window.display) as connection:
        focused = connection.get_input_focus().focus
        root = connection.screen().root
        while hasattr(focused, "id") and focused.id != root.id:  # X.NONE and PointerRoot are ints
            if focused.id == window.id:
                return True
            try:
                focused = focused.query_tree().parent
            except BadWindow:
                return False
        return False


def window_exists(window) -> bool:
    with _connect(window.display) as connection:
        try:
            connection.create_resource_object("window", window.id).get_attributes()
        except BadWindow:
            return False
        return True
