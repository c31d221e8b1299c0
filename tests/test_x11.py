"""perception/x11.py against a real X server (Xvfb) and the stand-in game."""

import json
import os
import time

import pytest

pytest.importorskip("Xlib", reason="python-xlib comes with pyautogui on Linux only")

from perception.window import WindowError
from perception.windows import find_window
from perception.x11 import (
    focus_window,
    has_focus,
    list_shown_windows,
    window_exists,
)
from tests.support.plain_windows import other_window

pytest_plugins = ("tests.support.xvfb",)  # x_display, start_game
pytestmark = pytest.mark.usefixtures("x_display")

RED, MAGENTA = (220, 40, 40), (210, 50, 200)  # the stand-in game's red cube and magenta sphere


def grab(bbox):
    from PIL import ImageGrab

    return ImageGrab.grab(bbox=bbox, xdisplay=os.environ["DISPLAY"])


def colours(window, box):
    """The colours in `box` (left, top, right, bottom), in window coordinates."""
    left, top, right, bottom = box
    image = grab((window.x + left, window.y + top, window.x + right, window.y + bottom))
    return {colour for _, colour in image.getcolors(maxcolors=1 << 20)}


def read_pose(path):
    return json.loads(path.read_text())


@pytest.fixture
def hold(monkeypatch):
    """hold(key, seconds): keyDown, sleep, keyUp, as a game that polls keys needs."""
    import pyautogui  # reads DISPLAY when imported, so only after Xvfb is up

    # Its default PAUSE sleeps 0.1 s after keyDown too, which would lengthen the hold.
    monkeypatch.setattr(pyautogui, "PAUSE", 0)

    def hold_key(key, seconds):
        pyautogui.keyDown(key)
        try:
            time.sleep(seconds)
        finally:
            pyautogui.keyUp(key)

    return hold_key


def wait_for_pose_change(path, before, seconds=2.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pose = read_pose(path)
        if pose != before:
            time.sleep(0.1)  # let the last frames after the key release land
            return read_pose(path)
        time.sleep(0.02)
    return read_pose(path)


def test_finds_the_shown_window_with_its_geometry(start_game):
    start_game("Geometry Game", "--position", "100,50", "--size", "640x360")
    window = find_window(r"^Geometry G\w+$")
    assert window.title == "Geometry Game"
    assert (window.x, window.y, window.width, window.height) == (100, 50, 640, 360)
    assert [w.id for w in list_shown_windows() if w.title == "Geometry Game"] == [window.id]
    assert window.bbox == (100, 50, 740, 410)
    assert not window.minimized and window_exists(window)


def test_hidden_helper_windows_with_the_same_title_are_left_out(start_game):
    _, game, _ = start_game("Helper Game")
    with other_window("Helper Game", shown=False):
        titled = [window for window in list_shown_windows() if window.title == "Helper Game"]
        assert [window.id for window in titled] == [game.id]
        assert find_window("Helper Game").id == game.id


def test_two_shown_windows_that_match_are_an_error(start_game):
    start_game("Twin Game")
    twins = r"^2 shown windows match 'Twin': 'Twin Game' .*, 'Twin Game' .*close one"
    with other_window("Twin Game"), pytest.raises(WindowError, match=twins):
        find_window("Twin")


def test_no_match_lists_the_titles_that_exist(start_game):
    start_game("Listed Game")
    with other_window("Ünïcode Editor"), pytest.raises(WindowError) as caught:
        find_window("Unity")
    message = str(caught.value)
    assert message.startswith("no shown window's title matches 'Unity'; the titles are: ")
    assert "'Listed Game'" in message and "'Ünïcode Editor'" in message
    assert "\n" not in message


def test_minimized_and_zero_sized_windows_are_errors():
    with other_window("Iconified Game", shown=False, minimized=True):
        [window] = [w for w in list_shown_windows() if w.title == "Iconified Game"]
        assert window.minimized
        with pytest.raises(WindowError, match="is minimized: restore it first"):
            find_window("Iconified Game")
    tiny = other_window("Tiny Game", size=(1, 1))
    with tiny, pytest.raises(WindowError, match="is 1x1: it shows nothing"):
        find_window("Tiny Game")


def test_focus_goes_to_the_window_and_away_again(start_game):
    _, game, _ = start_game("Focus Game")
    focus_window(game)
    assert has_focus(game)
    with other_window("Other App"):
        other = find_window("Other App")
        focus_window(other)
        assert not has_focus(game)
        assert has_focus(other)
    assert not window_exists(other)
    with pytest.raises(WindowError, match="cannot focus the window 'Other App'"):
        focus_window(other)


def test_a_held_key_moves_the_focused_game(start_game, hold):
    _, game, pose_file = start_game("Keys Game")
    focus_window(game)
    start = read_pose(pose_file)
    hold("w", 0.3)
    pose = wait_for_pose_change(pose_file, start)
    assert pose["x"] == start["x"] and pose["yaw"] == start["yaw"]
    assert 0.3 < pose["y"] - start["y"] < 1.2  # 2 units/s for about 0.3 s

    hold("left", 0.3)
    turned = wait_for_pose_change(pose_file, pose)
    assert 300 < turned["yaw"] < 345  # 90 degrees/s to the left, from 0


def test_split_screen_viewports_move_on_their_own_keys(start_game, hold):
    _, game, pose_file = start_game("Split Game", "--split", "--position", "0,0")
    left_half, right_half = colours(game, (0, 0, 320, 360)), colours(game, (320, 0, 640, 360))
    assert RED in left_half and MAGENTA not in left_half
    assert MAGENTA in right_half and RED not in right_half
    focus_window(game)
    start = read_pose(pose_file)
    hold("i", 0.3)
    pose = wait_for_pose_change(pose_file, start)
    assert pose["left"] == start["left"]
    assert pose["right"]["y"] < start["right"]["y"]  # it faces -y


def test_a_screenshot_of_the_window_region(start_game):
    _, game, _ = start_game("Shot Game", "--position", "20,30", "--size", "320x200")
    image = grab(game.bbox)
    assert image.size == (320, 200)
    seen = colours(game, (0, 0, 320, 200))
    assert len(seen) > 1 and RED in seen  # the red cube, ahead at the start


def test_no_display_is_a_one_line_error(monkeypatch):
    monkeypatch.delenv("DISPLAY")
    with pytest.raises(WindowError, match=r"^no display: set DISPLAY"):
        list_shown_windows()
    with pytest.raises(WindowError, match=r"^no display: cannot open X display ':999'"):
        list_shown_windows(":999")
