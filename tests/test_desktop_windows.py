"""perception/desktop_windows.py (Windows and macOS, through PyWinCtl) against a fake PyWinCtl.

Never run on a real Windows or macOS desktop here: these tests check the finder's logic on
the window lists PyWinCtl gives there.
"""

import importlib
import sys
import types

import pytest

from perception.window import WindowError
from perception.windows import find_window


class FakeWindow:
    def __init__(self, handle, title, visible=True, minimized=False, size=(640, 360)):
        self.handle, self.title, self.isVisible, self.isMinimized = handle, title, visible, minimized
        self.left, self.top = 10, 20
        self.width, self.height = size
        self.activated, self.refuses_focus = 0, False

    def getHandle(self):
        return self.handle

    def activate(self, wait=False):
        self.activated += 1
        return not self.refuses_focus


@pytest.fixture
def desktop(monkeypatch):
    """The module, importing a fake `pywinctl` whose windows and active window a test sets."""
    fake = types.ModuleType("pywinctl")
    fake.windows, fake.active, fake.error = [], None, None

    def get_all_windows():
        if fake.error:
            raise fake.error
        return list(fake.windows)

    fake.getAllWindows = get_all_windows
    fake.getActiveWindow = lambda: fake.active
    monkeypatch.setitem(sys.modules, "pywinctl", fake)
    module = importlib.import_module("perception.desktop_windows")
    module = importlib.reload(module)  # bound to this test's fake
    module.fake = fake
    return module


def test_the_game_window_is_found_among_shown_titled_windows_and_focused(desktop):
    game = FakeWindow(0x51, "My Scene - Unity")
    desktop.fake.windows = [
        FakeWindow(1, ""),
        FakeWindow(2, "My Scene (hidden)", visible=False),
        game,
        FakeWindow(3, "Terminal"),
    ]
    window = find_window("^My Scene", system=desktop)
    assert (window.id, window.title, window.bbox) == (0x51, "My Scene - Unity", (10, 20, 650, 380))
    assert [w.title for w in desktop.list_shown_windows()] == ["My Scene - Unity", "Terminal"]
    assert not desktop.has_focus(window)
    desktop.focus_window(window)
    desktop.fake.active = game
    assert game.activated == 1 and desktop.has_focus(window) and desktop.window_exists(window)
    desktop.fake.windows.remove(game)
    assert not desktop.window_exists(window)
    with pytest.raises(WindowError, match="it is gone"):
        desktop.focus_window(window)


def test_minimized_and_ambiguous_windows_are_errors(desktop):
    desktop.fake.windows = [FakeWindow(1, "Game", minimized=True, visible=False)]
    with pytest.raises(WindowError, match="'Game' is minimized: restore it first"):
        find_window("Game", system=desktop)
    desktop.fake.windows = [FakeWindow(1, "Game"), FakeWindow(2, "Game")]
    with pytest.raises(WindowError, match="2 shown windows match 'Game'"):
        find_window("Game", system=desktop)


def test_on_macos_hidden_titles_and_refused_focus_name_the_missing_permissions(desktop, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    desktop.fake.windows = [FakeWindow(1, ""), FakeWindow(2, "")]  # what macOS gives without Screen Recording
    with pytest.raises(WindowError) as caught:
        find_window("Game", system=desktop)
    assert "title is hidden" in str(caught.value) and "Screen Recording" in str(caught.value)
    game = FakeWindow(3, "Game")
    game.refuses_focus = True  # no Accessibility permission
    desktop.fake.windows = [game]
    with pytest.raises(WindowError, match=r"cannot focus the window 'Game'.*Accessibility"):
        desktop.focus_window(find_window("Game", system=desktop))


def test_a_failing_window_list_is_one_line(desktop, monkeypatch):
    desktop.fake.error = RuntimeError("AppleScript error:\n  not allowed")
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(WindowError) as caught:
        desktop.list_shown_windows()
    message = str(caught.value)
    assert "\n" not in message and "not allowed" in message and "Accessibility" in message
