"""Plain X windows for the display tests: a second app, a toolkit's hidden helper, a minimized window."""

from contextlib import contextmanager

ICONIC_STATE = 3  # ICCCM WM_STATE of a minimized window


@contextmanager
def other_window(title, shown=True, size=(200, 100), minimized=False):
    """A plain X window with `title`, as a toolkit's helper window or a second app would be."""
    from Xlib import X, Xatom
    from Xlib.display import Display

    connection = Display()
    root = connection.screen().root
    window = root.create_window(0, 0, *size, 0, X.CopyFromParent)
    window.change_property(
        connection.intern_atom("_NET_WM_NAME"),
        connection.intern_atom("UTF8_STRING"),
        8,
        title.encode(),
    )
    window.change_property(Xatom.WM_NAME, Xatom.STRING, 8, title.encode("latin-1", "replace"))
    if minimized:  # what a window manager records when it iconifies a window
        wm_state = connection.intern_atom("WM_STATE")
        window.change_property(wm_state, wm_state, 32, [ICONIC_STATE, X.NONE])
    if shown:
        window.map()
    connection.sync()
    try:
        yield window
    finally:
        connection.close()  # destroys the window
