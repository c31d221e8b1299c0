"""Reading a decision out of a model's reply (the YAML of spec section 4).

Models answer in every shape: fenced or bare YAML, JSON, prose around it,
reasoning wrapped in <think> tags, tabs, "Move Forward" for `forward`. All of
that is read here, always with a safe loader; anything that still names no
available action is a ReplyError, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import yaml

from explorer.store import BROADCAST

FIELDS = ("thinking", "action", "reason", "message_to_others", "message_to")
MAX_REPLY_CHARS = 20_000  # read no further: a decision is a few lines
# Longest text kept per field: a runaway reply must not swell the trace and prompts.
FIELD_LIMITS = {"thinking": 1000, "reason": 500, "message_to_others": 300, "message_to": 40}
_FENCE = re.compile(r"```[ \t]*(?:ya?ml|json)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_FIELD_LINE = re.compile(rf"^({'|'.join(FIELDS)})[ \t]*:", re.MULTILINE)
_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.DOTALL | re.IGNORECASE)
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)
_BACKTICKED_VALUE = re.compile(r"^([ \t]*\w+[ \t]*:[ \t]*)`([^`\n]*)`[ \t]*$", re.MULTILINE)
# Phrasings models use for the actions, after lower-casing and joining words with "_".
ACTION_SYNONYMS = {
    "move_forward": "forward", "go_forward": "forward", "walk_forward": "forward", "ahead": "forward",
    "move_ahead": "forward", "step_forward": "forward", "go_straight": "forward",
    "move_backward": "backward", "move_back": "backward", "go_back": "backward", "step_back": "backward",
    "back": "backward", "walk_backward": "backward",
    "strafe_left": "move_left", "step_left": "move_left", "strafe_right": "move_right", "step_right": "move_right",
    "go_up": "move_up", "ascend": "move_up", "rise": "move_up", "up": "move_up",
    "go_down": "move_down", "descend": "move_down", "down": "move_down",
    "turn_left": "look_left", "rotate_left": "look_left", "turn_right": "look_right", "rotate_right": "look_right",
    "tilt_up": "look_up", "tilt_down": "look_down",
    "roll_left": "tilt_left", "roll_right": "tilt_right",
}
BROADCAST_NAMES = {"all", "everyone", "everybody", "team", "all_agents", "*", "others", "broadcast"}


class ReplyError(ValueError):
    """The reply holds no usable decision; the message says why."""


@dataclass(frozen=True)
class Decision:
    action: str
    thinking: str = ""
    reason: str = ""
    message_to_others: str = ""
    message_to: str = BROADCAST

    def to_dict(self):
        return asdict(self)

    def to_yaml(self):
        fields = {k: v for k, v in self.to_dict().items() if v and (k != "message_to" or self.message_to_others)}
        fields["action"] = self.action
        return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1000)


def parse_decision(text, available_actions) -> Decision:
    """The decision in `text`, which may be fenced, bare, JSON, or wrapped in prose."""
    fields = _load_fields(_REASONING.sub("", (text or "")[:MAX_REPLY_CHARS]))
    action = fields.get("action")
    if not isinstance(action, str) or not action.strip():
        raise ReplyError("the reply has no `action` field")
    values = {name: _text(fields.get(name), FIELD_LIMITS[name]) for name in FIELDS if name != "action"}
    values["message_to"] = values["message_to"] or BROADCAST
    return Decision(action=normalise_action(action, available_actions), **values)


def normalise_action(raw, available_actions):
    """The available action `raw` names ("Move Forward" is `forward`), or ReplyError."""
    words = re.sub(r"[^a-z0-9]+", "_", raw.strip().lower()).strip("_")
    action = ACTION_SYNONYMS.get(words, words)
    if action not in available_actions:
        raise ReplyError(f"unknown action {raw.strip()[:40]!r}")
    return action


def resolve_recipient(message_to, sender, team):
    """(recipient, note): a teammate's id, or "all"; the note says what was changed, if anything."""
    wanted = (message_to or BROADCAST).strip()
    if re.sub(r"[^a-z*]+", "_", wanted.lower()).strip("_") in BROADCAST_NAMES:
        return BROADCAST, None
    for agent_id in team:
        if agent_id.lower() == wanted.lower().replace(" ", "") and agent_id != sender:
            return agent_id, None
    return BROADCAST, f"message_to {wanted[:40]!r} is not a teammate; the message went to all"


def _load_fields(text):
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else [text, _field_block(text)]
    error = None
    for candidate in filter(None, candidates):
        try:
            loaded = yaml.safe_load(_tidy(candidate))
        except yaml.YAMLError as exc:
            error = exc
            continue
        if isinstance(loaded, dict) and "action" in loaded:
            return loaded
    if error is not None:
        raise ReplyError(f"the reply is not valid YAML ({_first_line(error)})")
    raise ReplyError("the reply has no `action` field")


def _tidy(text):
    """What models write that YAML refuses: tab indentation, `backticked` values."""
    text = _LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), text)
    return _BACKTICKED_VALUE.sub(r"\1\2", text)


def _field_block(text):
    """The lines from the first field to the last field's value, dropping prose around them."""
    matches = list(_FIELD_LINE.finditer(text))
    if not matches:
        return ""
    lines = text[matches[0].start():].splitlines()
    block = []
    for line in lines:
        if block and line.strip() and not line[0].isspace() and not _FIELD_LINE.match(line):
            break  # prose after the block
        block.append(line)
    return "\n".join(block)


def _text(value, limit):
    """A field as bounded text: scalars, or a flat list of them.

    Nested values are dropped: through YAML aliases a few hundred bytes can
    nest into a structure whose text is exponentially long.
    """
    if isinstance(value, list) and all(isinstance(item, (str, int, float, bool)) for item in value):
        value = "; ".join(map(str, value[:50]))
    if not isinstance(value, (str, int, float, bool)):
        return ""
    text = str(value).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(error):
    return str(error).strip().splitlines()[0]
