"""Reading a decision out of a model's reply: YAML with the thinking, the action, the reason and a message.

The reply is read by explorer/model/reading.py, like every model answer; here
its fields are checked and bounded, and phrasings like "Move Forward" are read
as the action they name. Anything that still names no available action is a
ReplyError, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from explorer.model.reading import ReplyError, bounded_text, read_structured
from explorer.policies.sentences import Heading
from nodes.decision_context import DecisionContext
from nodes.interfaces import DECISION_TEXT_LIMITS, Decision, cut_text
from perception.base import BROADCAST

FIELDS = ("thinking", "action", "reason", "message_to_others", "message_to")
_FIELD_LINE = re.compile(rf"^({'|'.join(FIELDS + ('goal',))})[ \t]*:", re.MULTILINE)
_GOAL_ID = re.compile(r"g?(\d+)")
# Phrasings models use for the actions, after lower-casing and joining words with "_".
ACTION_SYNONYMS = {
    "move_forward": "forward",
    "go_forward": "forward",
    "walk_forward": "forward",
    "ahead": "forward",
    "move_ahead": "forward",
    "step_forward": "forward",
    "go_straight": "forward",
    "move_backward": "backward",
    "move_back": "backward",
    "go_back": "backward",
    "step_back": "backward",
    "back": "backward",
    "walk_backward": "backward",
    "strafe_left": "move_left",
    "step_left": "move_left",
    "strafe_right": "move_right",
    "step_right": "move_right",
    "go_up": "move_up",
    "ascend": "move_up",
    "rise": "move_up",
    "up": "move_up",
    "go_down": "move_down",
    "descend": "move_down",
    "down": "move_down",
    "turn_left": "look_left",
    "rotate_left": "look_left",
    "turn_right": "look_right",
    "rotate_right": "look_right",
    "tilt_up": "look_up",
    "tilt_down": "look_down",
    "roll_left": "tilt_left",
    "roll_right": "tilt_right",
}
BROADCAST_NAMES = {"all", "everyone", "everybody", "team", "all_agents", "*", "others", "broadcast"}


def parse_decision(text: str, available_actions: Sequence[str]) -> Decision:
    """The decision in `text`, which may be fenced, bare, JSON, or wrapped in prose."""
    fields = read_structured(text, lambda loaded: isinstance(loaded, dict) and "action" in loaded, _field_block)
    if fields is None or not isinstance(fields.get("action"), str) or not fields["action"].strip():
        raise ReplyError("the reply has no `action` field")
    return _decision(fields, normalise_action(fields["action"], available_actions))


def parse_goal_decision(text: str, available_actions: Sequence[str], goal_count: int) -> tuple[Decision, int | None]:
    """(decision, goal number or None) from a reply that names a goal (`goal: G3`) or an action.

    An action overrides a goal; the decision's action for a goal is left empty, for the planner."""
    fields = read_structured(
        text, lambda loaded: isinstance(loaded, dict) and ("action" in loaded or "goal" in loaded), _field_block
    )
    if fields is None or not (
        (isinstance(fields.get("action"), str) and fields["action"].strip()) or _given(fields.get("goal"))
    ):
        raise ReplyError("the reply has neither a `goal` nor an `action` field")
    if isinstance(fields.get("action"), str) and fields["action"].strip():
        return _decision(fields, normalise_action(fields["action"], available_actions)), None
    raw = str(fields["goal"]).strip()
    named = _GOAL_ID.fullmatch(re.sub(r"[^a-z0-9]+", "", raw.lower()))
    number = int(named.group(1)) if named else None
    if number is None or not 1 <= number <= goal_count:
        raise ReplyError(f"unknown goal {raw[:40]!r}")
    return _decision(fields, ""), number


def _given(value: object) -> bool:
    return isinstance(value, (str, int)) and str(value).strip() != ""


def _decision(fields: Mapping[str, object], action: str) -> Decision:
    values = {name: bounded_text(fields.get(name), DECISION_TEXT_LIMITS[name]) for name in FIELDS if name != "action"}
    # A recipient with no words of the model's own is no one's: news added later goes to the whole team.
    values["message_to"] = (values["message_to"] if values["message_to_others"] else "") or BROADCAST
    return Decision(action=action, **values)


def normalise_action(raw: str, available_actions: Sequence[str]) -> str:
    """The available action `raw` names ("Move Forward" is `forward`), or ReplyError."""
    words = re.sub(r"[^a-z0-9]+", "_", raw.strip().lower()).strip("_")
    action = ACTION_SYNONYMS.get(words, words)
    if action not in available_actions:
        raise ReplyError(f"unknown action {raw.strip()[:40]!r}")
    return action


def addressed(decision: Decision, context: DecisionContext) -> tuple[Decision, tuple[str, ...]]:
    """(the decision with its message to a teammate or "all", a note where its recipient was changed)."""
    if not (decision.message_to_others and context.setup.comm_enabled):
        return decision, ()
    team = context.team
    recipient, note = resolve_recipient(decision.message_to, team.agent_id, team.members)
    return replace(decision, message_to=recipient), ((note,) if note else ())


def resolve_recipient(message_to: str, sender: str, team: Sequence[str]) -> tuple[str, str | None]:
    """(recipient, note): a teammate's id, or "all"; the note says what was changed, if anything."""
    wanted = (message_to or BROADCAST).strip()
    if re.sub(r"[^a-z*]+", "_", wanted.lower()).strip("_") in BROADCAST_NAMES:
        return BROADCAST, None
    for agent_id in team:
        if agent_id.lower() == wanted.lower().replace(" ", "") and agent_id != sender:
            return agent_id, None
    return BROADCAST, f"message_to {wanted[:40]!r} is not a teammate; the message went to all"


def _field_block(text: str) -> str:
    """The lines from the first field to the last field's value, dropping prose around them."""
    matches = list(_FIELD_LINE.finditer(text))
    if not matches:
        return ""
    lines = text[matches[0].start() :].splitlines()
    block: list[str] = []
    for line in lines:
        if block and line.strip() and not line[0].isspace() and not _FIELD_LINE.match(line):
            break  # prose after the block
        block.append(line)
    return "\n".join(block)


FACING_NAMES = ("north", "east", "south", "west")
ModelDirective = tuple[str, Heading | None, str | None, str]  # (explorer, goal or None, action or None, reason)


def parse_directives(
    text: str,
    team: Sequence[str],
    available_actions: Sequence[str],
    size: tuple[int, int, int],
) -> list[ModelDirective]:
    """[(explorer, (x, y, level, facing or None) or None, action or None, reason)], in team order, from a
    coordinator's reply: `directives: {Agent1: {goal: [x, y, level], facing: east, reason: ...}, Agent2:
    {action: ...}}`; a reason not given is ""."""
    loaded = read_structured(text, lambda value: isinstance(value, dict) and "directives" in value)
    if loaded is None:
        raise ReplyError("the reply has no `directives` mapping")
    given = loaded["directives"] or {}
    if not isinstance(given, dict):
        raise ReplyError("`directives` must map explorers to a goal or an action")
    names = {agent_id.lower(): agent_id for agent_id in team}
    directives: dict[str, tuple[Heading | None, str | None, str]] = {}
    for raw, entry in given.items():
        explorer = names.get(str(raw).strip().lower().replace(" ", ""))
        if explorer is None:
            raise ReplyError(f"{str(raw)[:40]!r} is not one of the explorers ({', '.join(team)})")
        if entry is None or (isinstance(entry, dict) and all(value is None for value in entry.values())):
            continue  # left to carry on (strict mode's schema gives every field, null where left out)
        if not isinstance(entry, dict):
            raise ReplyError(f"{explorer}'s directive must be a mapping with a `goal` or an `action`")
        reason = cut_text(str(entry.get("reason") or "").strip(), DECISION_TEXT_LIMITS["reason"])
        if _given(entry.get("action")):
            directives[explorer] = (None, normalise_action(str(entry["action"]), available_actions), reason)
            continue
        directives[explorer] = (_goal_cell(explorer, entry.get("goal"), entry.get("facing"), size), None, reason)
    return [(explorer, *directives[explorer]) for explorer in team if explorer in directives]


def _goal_cell(explorer: str, goal: object, facing: object, size: tuple[int, int, int]) -> Heading:
    if not (isinstance(goal, list) and len(goal) in (2, 3) and all(type(v) is int for v in goal)):
        raise ReplyError(f"{explorer}'s goal must be a cell [x, y, level] of whole numbers")
    x, y, z = (goal + [0])[:3]
    width, depth, height = size
    if not (0 <= x < width and 0 <= y < depth and 0 <= z < height):
        raise ReplyError(f"{explorer}'s goal {goal} is outside the world ({width}x{depth}x{height})")
    if facing is None:
        return x, y, z, None
    named = facing.strip().lower() if isinstance(facing, str) else ""
    if named not in FACING_NAMES:
        raise ReplyError(f"{explorer}'s facing {bounded_text(facing, 20)!r} is not north, east, south or west")
    return x, y, z, named
