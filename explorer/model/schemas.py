"""The JSON schemas a model's reply is constrained to under `--reply-format json`: one declaration each,
which dialects.py shapes for each dialect a server speaks.

Each schema puts the choice first (the action, the goal, the recipient) and
bounds every free text, so a small model that rambles runs out of room in a
field that no longer matters, not before it has chosen. A schema constrains
decoding only: the reply is read and checked as every reply is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nodes.decision_context import CAPTION_CHARS
from perception.base import FACINGS

JsonSchema = dict[str, Any]

REASON_CHARS = 160
# A goal's reason: a few words beside the goal's own line, which says where it is and what it shows. A
# constrained decoder gives a small model this much room to ramble in, and no more: with the JSON around it, a
# reply of at most 40 tokens even where the words split into short tokens (coordinates, digits).
GOAL_REASON_CHARS = 32
MESSAGE_CHARS = 200
MAX_OBJECTS = 30  # the objects a vision reply names
OBJECT_NAME_CHARS = 80  # an object's name: a few words


def decision_schema(actions: Sequence[str], recipients: Sequence[str] | None) -> JsonSchema:
    """An action from `actions`; with `recipients` (messages on), whom to tell and what."""
    return _object({"action": _enum(actions), **_message(recipients), "reason": _text(REASON_CHARS)})


def goal_schema(goal_ids: Sequence[str]) -> JsonSchema:
    """A goal id from `goal_ids`, and why. No message: the planner tells the team where the agent is heading and
    what it has covered (explorer/policies/goals.py), and the team's store has what it found."""
    return _object({"goal": _enum(goal_ids), "reason": _text(GOAL_REASON_CHARS)})


def directives_schema(explorers: Sequence[str], actions: Sequence[str], size: Sequence[int]) -> JsonSchema:
    """A coordinator's directives: for each explorer it directs, a cell to walk to (and a facing) or an action."""
    width, depth, height = size
    cell = {
        "type": "array",
        "items": {"type": "integer", "minimum": 0, "maximum": max(width, depth, height) - 1},
        "minItems": 3,
        "maxItems": 3,
    }
    directive = {
        "type": "object",
        "properties": {"goal": cell, "facing": _enum(FACINGS), "action": _enum(actions), "reason": _text(REASON_CHARS)},
        "additionalProperties": False,
    }
    directives = {
        "type": "object",
        "properties": dict.fromkeys(explorers, directive),
        "additionalProperties": False,
    }
    return _object({"directives": directives})


def vision_schema(parts: Sequence[str] = ("caption", "objects")) -> JsonSchema:
    """What a screenshot shows: a caption, the objects in view, or both (in that order)."""
    fields = {
        "caption": _text(CAPTION_CHARS),
        "objects": {"type": "array", "items": _text(OBJECT_NAME_CHARS), "maxItems": MAX_OBJECTS},
    }
    return _object({part: fields[part] for part in parts})


def _message(recipients: Sequence[str] | None) -> JsonSchema:
    if recipients is None:
        return {}
    return {"message_to": _enum([*recipients, "all"]), "message_to_others": _text(MESSAGE_CHARS)}


def _object(properties: JsonSchema) -> JsonSchema:
    # Every field required, in order: constrained decoders write them in the order given.
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _enum(values: Sequence[str]) -> JsonSchema:
    return {"type": "string", "enum": list(values)}


def _text(limit: int) -> JsonSchema:
    return {"type": "string", "maxLength": limit}
