import pytest

from perception.actions import ACTIONS
from perception.keymap import (
    DEFAULT_KEYMAP,
    FrameFeedback,
    KeyBinding,
    KeyMapError,
    load_keymap,
)

pytest_plugins = ("tests.support.xvfb",)  # x_display

SHIPPED = DEFAULT_KEYMAP
KNOWN_KEYS = {"w", "a", "s", "d", "left", "right", "shift", "space"}


def known_key(name):
    return name in KNOWN_KEYS


def write(tmp_path, text):
    path = tmp_path / "keys.yaml"
    path.write_text(text)
    return path


def test_the_three_ways_to_bind_a_key(tmp_path):
    path = write(
        tmp_path,
        "hold_seconds: 0.25\nactions:\n  look_left: {key: left, hold: 0.4}\n  move_up: [shift, w]\n  forward: w\n",
    )
    keymap = load_keymap(path, known_key)
    assert keymap.actions == {
        "look_left": KeyBinding(("left",), 0.4),
        "move_up": KeyBinding(("shift", "w"), 0.25),
        "forward": KeyBinding(("w",), 0.25),
    }
    assert keymap.available_actions == ("forward", "move_up", "look_left")  # in ACTIONS order
    assert keymap.path == str(path)


def test_hold_seconds_has_a_default_and_a_mapping_may_list_keys(tmp_path):
    path = write(tmp_path, "actions:\n  forward: w\n  move_up: {key: [shift, w]}\n")
    keymap = load_keymap(path, known_key)
    assert keymap.actions["forward"].hold == 0.25
    assert keymap.actions["move_up"] == KeyBinding(("shift", "w"), 0.25)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("actions: [forward: w", "invalid YAML at line 1"),
        ("", "the file is empty"),
        ("- forward", "the top level must be a mapping of keys, not a list"),
        (
            "hold: 1\nactions: {forward: w}",
            "unknown top-level key 'hold' (allowed: hold_seconds, actions, feedback)",
        ),
        ("hold_seconds: 0.2", "'actions' is missing"),
        ("actions: {}", "'actions' is empty"),
        ("actions: [w]", "'actions' must be a mapping of action: key, not a list"),
        ("actions: {jump: space}", "unknown action 'jump' (valid: forward, backward,"),
        ("actions: {forward: 3}", "'forward': a key must be a key name, not number 3"),
        ("actions: {forward: [w, [a]]}", "'forward': a key must be a key name, not list ['a']"),
        ("actions: {forward: }", "'forward' has no key"),
        ("actions: {forward: []}", "'forward' has an empty list of keys"),
        ("actions: {forward: {hold: 1}}", "'forward' has no 'key'"),
        (
            "actions: {forward: {key: w, time: 1}}",
            "unknown 'forward' key 'time' (allowed: key, hold)",
        ),
        ("actions: {forward: wz}", "'forward': unknown key name 'wz'"),
        ("actions: {move_up: [shift, Shift]}", "'move_up': unknown key name 'Shift'"),
        (
            "actions: {forward: {key: w, hold: 0}}",
            "'forward' hold must be a number of seconds above 0",
        ),
        ("actions: {forward: {key: w, hold: fast}}", "got 'fast'"),
        (
            "hold_seconds: 6\nactions: {forward: w}",
            "'hold_seconds' must be a number of seconds above 0 and at most 5",
        ),
        ("hold_seconds: -1\nactions: {forward: w}", "'hold_seconds' must be"),
        ("hold_seconds: true\nactions: {forward: w}", "'hold_seconds' must be"),
        ("actions: {forward: w}\nfeedback: 0.1", "'feedback' must be a mapping of setting: number, not a number"),
        ("actions: {forward: w}\nfeedback: {settle: 1}", "unknown 'feedback' key 'settle' (allowed: settle_seconds,"),
        (
            "actions: {forward: w}\nfeedback: {changed_share: 2}",
            "'feedback' changed_share must be a number from 0 to 1, got 2",
        ),
        (
            "actions: {forward: w}\nfeedback: {pixel_threshold: 8.5}",
            "pixel_threshold must be a whole number from 0 to 254",
        ),
    ],
)
def test_every_problem_is_one_line_naming_the_file(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(KeyMapError) as caught:
        load_keymap(path, known_key)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert problem in message
    assert "\n" not in message


def test_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(KeyMapError, match="no such file"):
        load_keymap(tmp_path / "absent.yaml", known_key)
    with pytest.raises(KeyMapError, match="is a directory"):
        load_keymap(tmp_path, known_key)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(KeyMapError, match="not UTF-8"):
        load_keymap(binary, known_key)


def test_the_shipped_map_binds_every_action():
    keymap = load_keymap(SHIPPED, lambda name: True)
    assert keymap.available_actions == ACTIONS
    assert keymap.actions["forward"] == KeyBinding(("w",), 0.25)
    assert keymap.actions["look_left"].keys == ("left",)
    assert keymap.actions["tilt_right"].keys == ("e",)


@pytest.mark.usefixtures("x_display")
def test_the_shipped_keys_are_known_to_pyautogui():
    import pyautogui  # reads DISPLAY when imported, so only after Xvfb is up

    keymap = load_keymap(SHIPPED, pyautogui.isValidKey)
    assert keymap.available_actions == ACTIONS
    assert not pyautogui.isValidKey("Left")  # names are case-sensitive


def test_the_frame_feedback_has_defaults_a_map_may_override(tmp_path):
    assert load_keymap(write(tmp_path, "actions: {forward: w}"), known_key).feedback == FrameFeedback()
    keymap = load_keymap(
        write(tmp_path, "actions: {forward: w}\nfeedback: {changed_share: 0.05, settle_seconds: 0}"), known_key
    )
    assert keymap.feedback == FrameFeedback(settle_seconds=0.0, pixel_threshold=8, changed_share=0.05)
