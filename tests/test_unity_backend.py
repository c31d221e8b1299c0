"""The Unity backend's logic with a fake keyboard, windows and vision: no display needed."""

import sys
import threading
import time
import types

import pytest
from PIL import Image

from perception.base import PerceptionStopped
from perception.keyboard import Keyboard, KeyboardStopped
from perception.keymap import DEFAULT_KEYMAP, load_keymap
from perception.unity import AgentView, Sight, UnityPyAutoGUIPerception
from perception.window import Window
from tests.support.paths import ROOT

WINDOW = Window(7, "Game", 100, 50, 640, 360)


class FakeWindows:
    def __init__(self):
        self.exists, self.focused, self.focus_calls = True, True, 0

    def window_exists(self, window):
        return self.exists

    def has_focus(self, window):
        return self.focused

    def focus_window(self, window):
        self.focus_calls += 1
        self.focused = True


class FakeKeyboard:
    def __init__(self):
        self.held, self.lock, self.overlaps, self._inside = [], threading.Lock(), 0, 0

    def turn(self):
        return self.lock

    def hold(self, keys, seconds):
        self._inside += 1
        self.overlaps = max(self.overlaps, self._inside)
        time.sleep(0.01)
        self.held.append((keys, seconds))
        self._inside -= 1


class FakeScreen:
    """Frames that change with every key held, unless `frozen` (the agent faces a wall); counts its grabs."""

    def __init__(self, keyboard):
        self.keyboard, self.frozen, self.grabs = keyboard, False, 0

    def grab(self, bbox, display=""):
        self.grabs += 1
        shade = 0 if self.frozen else 40 * len(self.keyboard.held) % 256
        return Image.new("RGB", (bbox[2] - bbox[0], bbox[3] - bbox[1]), (shade, 90, 90))


def backend(tmp_path, keymap=DEFAULT_KEYMAP, agents=("Agent1",)):
    views = {agent: AgentView(WINDOW, load_keymap(keymap, lambda key: True)) for agent in agents}
    look = {agent: (lambda path: Sight("A red cube ahead.", ("red cube",))) for agent in agents}
    windows, keyboard = FakeWindows(), FakeKeyboard()
    perception = UnityPyAutoGUIPerception(None, views, keyboard, look, tmp_path, windows, grabber=FakeScreen(keyboard))
    return perception, windows, keyboard


def test_actions_press_the_mapped_keys_and_dead_reckon_the_pose(tmp_path):
    perception, _, keyboard = backend(tmp_path)
    assert perception.execute_action("Agent1", "forward").outcome == "moved"
    result = perception.execute_action("Agent1", "look_left")
    assert keyboard.held == [(("w",), 0.25), (("left",), 0.25)]
    assert result.outcome == "turned" and result.detail == "held left for 0.25 s"
    assert perception.get_agent_state("Agent1").to_dict() == {
        "position": [0, 1, 0],
        "facing": "west",
        "pitch": 0,
        "roll": 0,
    }
    assert result.view_change == 1.0 and sorted(result.frames) == ["after", "at", "before"]


def test_a_move_that_leaves_the_view_unchanged_is_blocked_and_not_counted(tmp_path):
    perception, _, keyboard = backend(tmp_path)
    perception.grabber.frozen = True
    perception.observe("Agent1", step=3)
    result = perception.execute_action("Agent1", "forward")
    assert keyboard.held == [(("w",), 0.25)]  # the key was pressed: the game refused the move
    assert result.outcome == "blocked" and result.view_change == 0.0
    assert result.detail == "the view did not change (held w for 0.25 s; 0.0% of it changed)"
    assert perception.get_agent_state("Agent1").to_dict()["position"] == [0, 0, 0]
    assert (
        result.frames["before"].endswith("Agent1_step003_before.png")
        and (tmp_path / "Agent1_step003_after.png").is_file()
    )
    assert perception.execute_action("Agent1", "look_left").outcome == "blocked"
    assert perception.get_agent_state("Agent1").facing == "north"


def test_the_after_frame_is_the_next_view_unless_a_key_was_pressed_in_the_window_since(tmp_path):
    perception, _, _ = backend(tmp_path, agents=("Agent1", "Agent2"))
    screen = perception.grabber
    perception.observe("Agent1", step=1)
    perception.execute_action("Agent1", "forward")
    grabs = screen.grabs
    view = perception.observe("Agent1", step=2)
    assert view.image_path == str(tmp_path / "Agent1_step001_after.png") and screen.grabs == grabs  # no capture
    perception.execute_action("Agent1", "forward")
    perception.execute_action("Agent2", "forward")  # the same window: Agent1's after-frame is stale
    view = perception.observe("Agent1", step=3)
    assert view.image_path == str(tmp_path / "Agent1_step003.png") and screen.grabs == grabs + 5  # 2 per action, 1 look


def test_an_action_the_key_map_leaves_out_is_unavailable_and_not_pressed(tmp_path):
    perception, _, keyboard = backend(tmp_path, keymap=ROOT / "tests" / "keymaps" / "split_right.yaml")
    assert "look_left" not in perception.available_actions("Agent1")
    result = perception.execute_action("Agent1", "look_left")
    assert result.outcome == "unavailable" and "has no key" in result.detail
    assert keyboard.held == [] and perception.get_agent_state("Agent1").facing == "north"


def test_focus_is_checked_before_every_key_and_restored(tmp_path):
    perception, windows, _ = backend(tmp_path)
    perception.execute_action("Agent1", "forward")
    assert windows.focus_calls == 0
    windows.focused = False  # the user clicked another window
    result = perception.execute_action("Agent1", "forward")
    assert windows.focus_calls == 1 and result.detail.endswith("after refocusing the window")


def test_a_window_that_is_gone_stops_the_run(tmp_path):
    perception, windows, keyboard = backend(tmp_path)
    windows.exists = False
    with pytest.raises(PerceptionStopped, match=r"^the game window 'Game' is gone: the run stops$"):
        perception.execute_action("Agent1", "forward")
    assert keyboard.held == []


def test_agents_take_the_keyboard_one_at_a_time(tmp_path):
    agents = [f"Agent{n}" for n in range(1, 7)]
    perception, _, keyboard = backend(tmp_path, agents=agents)
    threads = [threading.Thread(target=perception.execute_action, args=(agent, "forward")) for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keyboard.held) == 6 and keyboard.overlaps == 1


def test_a_region_is_in_window_coordinates():
    view = AgentView(WINDOW, None, (320, 0, 320, 360))
    assert view.bbox == (420, 50, 740, 410)
    assert AgentView(WINDOW, None).bbox == (100, 50, 740, 410)


class FakePyAutoGUI(types.ModuleType):
    """Records keyDown/keyUp; `fail_on` makes keyDown of that key raise."""

    class FailSafeException(Exception):
        pass

    def __init__(self, fail_on=None, fail_safe_corner=False):
        super().__init__("pyautogui")
        self.down, self.PAUSE, self.FAILSAFE = [], 0.1, False
        self.fail_on, self.corner = fail_on, fail_safe_corner

    def keyDown(self, key):
        if self.corner and self.FAILSAFE:
            raise self.FailSafeException("corner")
        if key == self.fail_on:
            raise RuntimeError("no such key")
        self.down.append(key)

    def keyUp(self, key):
        if self.corner and self.FAILSAFE:
            raise self.FailSafeException("corner")
        self.down.remove(key)

    def isValidKey(self, key):
        return key in ("w", "shift")


@pytest.fixture
def fake_gui(monkeypatch):
    def install(**options):
        module = FakePyAutoGUI(**options)
        monkeypatch.setitem(sys.modules, "pyautogui", module)
        return module

    return install


def test_the_keyboard_sets_pause_and_keeps_the_fail_safe(fake_gui):
    gui = fake_gui()
    keyboard = Keyboard()
    assert gui.PAUSE == 0 and gui.FAILSAFE is True
    assert keyboard.is_valid_key("w") and not keyboard.is_valid_key("W")


def test_keys_are_released_when_the_hold_is_interrupted(fake_gui, monkeypatch):
    gui = fake_gui()
    keyboard = Keyboard()

    def interrupted(seconds):
        assert gui.down == ["shift", "w"]  # held together
        raise KeyboardInterrupt

    monkeypatch.setattr(time, "sleep", interrupted)
    with pytest.raises(KeyboardInterrupt):
        keyboard.hold(("shift", "w"), 0.25)
    assert gui.down == []


def test_keys_pressed_before_an_error_are_released(fake_gui):
    gui = fake_gui(fail_on="w")
    with pytest.raises(RuntimeError):
        Keyboard().hold(("shift", "w"), 0.01)
    assert gui.down == []


def test_the_fail_safe_stops_the_run_with_one_line_and_leaves_no_key_down(fake_gui):
    gui = fake_gui(fail_safe_corner=True)
    keyboard = Keyboard()
    with pytest.raises(KeyboardStopped, match="fail-safe stopped the run: the mouse pointer is in a corner"):
        keyboard.hold(("w",), 0.01)
    assert gui.down == [] and gui.FAILSAFE is True


def test_a_key_held_when_the_pointer_reaches_a_corner_is_still_released(fake_gui, monkeypatch):
    gui = fake_gui()
    keyboard = Keyboard()
    monkeypatch.setattr(time, "sleep", lambda seconds: setattr(gui, "corner", True))
    keyboard.hold(("w",), 0.25)
    assert gui.down == [] and gui.FAILSAFE is True
    with pytest.raises(KeyboardStopped):
        keyboard.hold(("w",), 0.25)  # the next press stops the run
