"""Key map files: which keys a game needs held for each action.

```yaml
hold_seconds: 0.25              # default time a key is held
actions:
  forward: w                    # a key name as pyautogui knows it
  look_left: {key: left, hold: 0.4}
  move_up: [shift, w]           # keys held together
```

Actions left out of the map are not available in that game.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from perception.actions import ACTIONS

KEYMAP_KEYS = ("hold_seconds", "actions")
BINDING_KEYS = ("key", "hold")
DEFAULT_HOLD_SECONDS = 0.25
MAX_HOLD_SECONDS = 5.0  # longer holds are almost surely a typo, and stall every agent


class KeyMapError(Exception):
    """A key map that cannot be used; the message is one line naming the file."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = " ".join(str(problem).split())
        super().__init__(f"{self.path}: {self.problem}")


@dataclass(frozen=True)
class KeyBinding:
    """Keys pressed together, in order, and released after `hold` seconds."""

    keys: tuple[str, ...]
    hold: float


@dataclass(frozen=True)
class KeyMap:
    actions: dict  # action -> KeyBinding
    path: str = ""

    @property
    def available_actions(self) -> tuple[str, ...]:
        return tuple(action for action in ACTIONS if action in self.actions)


class _Invalid(Exception):
    """A problem in a key map's data; load_keymap adds the path."""


def load_keymap(path, is_valid_key) -> KeyMap:
    """Read and check a key map; `is_valid_key(name)` says whether a key name exists.

    The real check is pyautogui.isValidKey, passed in because importing
    pyautogui needs a display on Linux.
    """
    data = _parse(path, _read(path))
    try:
        return _build_keymap(data, is_valid_key, str(path))
    except _Invalid as problem:
        raise KeyMapError(path, problem) from None


def _read(path):
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyMapError(path, "no such file") from None
    except IsADirectoryError:
        raise KeyMapError(path, "is a directory, not a key map file") from None
    except UnicodeDecodeError:
        raise KeyMapError(path, "cannot read the file: it is not UTF-8 text") from None
    except OSError as error:
        raise KeyMapError(path, f"cannot read the file: {error.strerror}") from None


def _parse(path, text):
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        where = f" at line {error.problem_mark.line + 1}" if error.problem_mark else ""
        raise KeyMapError(path, f"invalid YAML{where}: {error.problem}") from None
    except yaml.YAMLError as error:
        raise KeyMapError(path, f"invalid YAML: {error}") from None
    if data is None:
        raise KeyMapError(path, "the file is empty")
    if not isinstance(data, dict):
        raise KeyMapError(path, f"the top level must be a mapping of keys, not a {_kind(data)}")
    return data


def _build_keymap(data, is_valid_key, path):
    _check_keys(data, KEYMAP_KEYS, "top-level")
    default_hold = _hold(data.get("hold_seconds", DEFAULT_HOLD_SECONDS), "'hold_seconds'")
    entries = data.get("actions")
    if entries is None:
        raise _Invalid("'actions' is missing: map at least one action to a key")
    if not isinstance(entries, dict):
        raise _Invalid(f"'actions' must be a mapping of action: key, not a {_kind(entries)}")
    if not entries:
        raise _Invalid("'actions' is empty: map at least one action to a key")
    actions = {}
    for action, entry in entries.items():
        if action not in ACTIONS:
            raise _Invalid(f"unknown action '{action}' (valid: {', '.join(ACTIONS)})")
        actions[action] = _binding(action, entry, default_hold, is_valid_key)
    return KeyMap(actions=actions, path=path)


def _binding(action, entry, default_hold, is_valid_key):
    """A KeyBinding from `w`, `[shift, w]` or `{key: w, hold: 0.4}`."""
    hold = default_hold
    if isinstance(entry, dict):
        _check_keys(entry, BINDING_KEYS, f"'{action}'")
        if "key" not in entry:
            raise _Invalid(f"'{action}' has no 'key'")
        if "hold" in entry:
            hold = _hold(entry["hold"], f"'{action}' hold")
        entry = entry["key"]
    if entry is None:
        raise _Invalid(f"'{action}' has no key")
    names = entry if isinstance(entry, list) else [entry]
    if not names:
        raise _Invalid(f"'{action}' has an empty list of keys")
    for name in names:
        if not isinstance(name, str) or not name:
            raise _Invalid(f"'{action}': a key must be a key name, not {_kind(name)} {name!r}")
        if not is_valid_key(name):
            raise _Invalid(f"'{action}': unknown key name '{name}'")
    return KeyBinding(tuple(names), hold)


def _hold(value, what):
    number_ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number_ok or not 0 < value <= MAX_HOLD_SECONDS:
        raise _Invalid(
            f"{what} must be a number of seconds above 0 "
            f"and at most {MAX_HOLD_SECONDS:g}, got {value!r}"
        )
    return float(value)


def _kind(value):
    """What a YAML value is, in words."""
    kinds = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "number"}
    return kinds.get(type(value), "number" if isinstance(value, float) else type(value).__name__)


def _check_keys(mapping, allowed, what):
    unknown = sorted(str(key) for key in mapping if key not in allowed)
    if unknown:
        raise _Invalid(f"unknown {what} key '{unknown[0]}' (allowed: {', '.join(allowed)})")
