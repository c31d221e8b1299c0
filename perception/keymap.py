"""Key map files: which keys a game needs held for each action.

```yaml
hold_seconds: 0.25              # default time a key is held
actions:
  forward: w                    # a key name as pyautogui knows it
  look_left: {key: left, hold: 0.4}
  move_up: [shift, w]           # keys held together
feedback:                       # optional: how an action's effect is read from the frames
  settle_seconds: 0.1           # wait after the keys are released before the after-frame
  pixel_threshold: 8            # a pixel changed if its grey level moved by more (of 255)
  changed_share: 0.005          # a move or turn that changed less of the view was blocked
```

Actions left out of the map are not available in that game.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perception.actions import ACTIONS
from perception.yaml_files import FileProblem, Invalid, check_keys, kind, load_mapping

KEYMAP_KEYS = ("hold_seconds", "actions", "feedback")
BINDING_KEYS = ("key", "hold")
SHIPPED_KEYMAPS = Path(__file__).parent / "keymaps"  # installed with the package
DEFAULT_KEYMAP = SHIPPED_KEYMAPS / "unity_fps.yaml"
DEFAULT_HOLD_SECONDS = 0.25
MAX_HOLD_SECONDS = 5.0  # longer holds are almost surely a typo, and stall every agent


class KeyMapError(FileProblem):
    """A key map that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class KeyBinding:
    """Keys pressed together, in order, and released after `hold` seconds."""

    keys: tuple[str, ...]
    hold: float


@dataclass(frozen=True)
class FrameFeedback:
    """How an action's effect is read from the frames just before and after it. Measured on the
    stand-in game (harness/stand_in_game.py, 640x360, these thresholds): a blocked move changed 0% of
    the view, and so did 0.3 s idle; the smallest real move, a walk across an open field with the
    objects far off, 0.9%; a turn 14-60%. A game whose view moves by itself (water, crowds) needs
    `changed_share` raised above what its idle frames change."""

    settle_seconds: float = 0.1  # at 60 frames a second the last held frame is drawn within two
    pixel_threshold: int = 8
    changed_share: float = 0.005


FEEDBACK_LIMITS = {"settle_seconds": (0.0, 2.0), "pixel_threshold": (0, 254), "changed_share": (0.0, 1.0)}


@dataclass(frozen=True)
class KeyMap:
    actions: dict  # action -> KeyBinding
    path: str = ""
    feedback: FrameFeedback = FrameFeedback()

    @property
    def available_actions(self) -> tuple[str, ...]:
        return tuple(action for action in ACTIONS if action in self.actions)


def load_keymap(path, is_valid_key) -> KeyMap:
    """Read and check a key map; `is_valid_key(name)` says whether a key name exists.

    The real check is pyautogui.isValidKey, passed in because importing
    pyautogui needs a display on Linux.
    """
    data = load_mapping(path, KeyMapError, "a key map file")
    try:
        return _build_keymap(data, is_valid_key, str(path))
    except Invalid as problem:
        raise KeyMapError(path, problem) from None


def _build_keymap(data, is_valid_key, path):
    check_keys(data, KEYMAP_KEYS, "top-level")
    default_hold = _hold(data.get("hold_seconds", DEFAULT_HOLD_SECONDS), "'hold_seconds'")
    entries = data.get("actions")
    if entries is None:
        raise Invalid("'actions' is missing: map at least one action to a key")
    if not isinstance(entries, dict):
        raise Invalid(f"'actions' must be a mapping of action: key, not a {kind(entries)}")
    if not entries:
        raise Invalid("'actions' is empty: map at least one action to a key")
    actions = {}
    for action, entry in entries.items():
        if action not in ACTIONS:
            raise Invalid(f"unknown action '{action}' (valid: {', '.join(ACTIONS)})")
        actions[action] = _binding(action, entry, default_hold, is_valid_key)
    return KeyMap(actions=actions, path=path, feedback=_feedback(data.get("feedback", {})))


def _feedback(entry):
    """FrameFeedback from the optional `feedback` mapping; what it leaves out keeps its default."""
    if not isinstance(entry, dict):
        raise Invalid(f"'feedback' must be a mapping of setting: number, not a {kind(entry)}")
    check_keys(entry, tuple(FEEDBACK_LIMITS), "'feedback'")
    for name, value in entry.items():
        low, high = FEEDBACK_LIMITS[name]
        whole = name == "pixel_threshold"
        number_ok = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
        if not number_ok or not low <= value <= high:
            what = "a whole number" if whole else "a number"
            raise Invalid(f"'feedback' {name} must be {what} from {low:g} to {high:g}, got {value!r}")
    settings: dict[str, Any] = {name: float(v) if name != "pixel_threshold" else v for name, v in entry.items()}
    return FrameFeedback(**settings)


def _binding(action, entry, default_hold, is_valid_key):
    """A KeyBinding from `w`, `[shift, w]` or `{key: w, hold: 0.4}`."""
    hold = default_hold
    if isinstance(entry, dict):
        check_keys(entry, BINDING_KEYS, f"'{action}'")
        if "key" not in entry:
            raise Invalid(f"'{action}' has no 'key'")
        if "hold" in entry:
            hold = _hold(entry["hold"], f"'{action}' hold")
        entry = entry["key"]
    if entry is None:
        raise Invalid(f"'{action}' has no key")
    names = entry if isinstance(entry, list) else [entry]
    if not names:
        raise Invalid(f"'{action}' has an empty list of keys")
    for name in names:
        if not isinstance(name, str) or not name:
            raise Invalid(f"'{action}': a key must be a key name, not {kind(name)} {name!r}")
        if not is_valid_key(name):
            raise Invalid(f"'{action}': unknown key name '{name}'")
    return KeyBinding(tuple(names), hold)


def _hold(value, what):
    number_ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number_ok or not 0 < value <= MAX_HOLD_SECONDS:
        raise Invalid(f"{what} must be a number of seconds above 0 and at most {MAX_HOLD_SECONDS:g}, got {value!r}")
    return float(value)
