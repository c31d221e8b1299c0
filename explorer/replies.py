"""Reading a decision out of a model's reply (the YAML of spec section 4)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import yaml

from explorer.store import BROADCAST

FIELDS = ("thinking", "action", "reason", "message_to_others", "message_to")
_FENCE = re.compile(r"```[ \t]*(?:ya?ml)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_FIELD_LINE = re.compile(rf"^({'|'.join(FIELDS)})\s*:", re.MULTILINE)


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
    """The decision in `text`, which may be fenced, bare, or wrapped in prose."""
    fields = _load_fields(text or "")
    action = fields.get("action")
    if not isinstance(action, str) or not action.strip():
        raise ReplyError("the reply has no `action` field")
    action = action.strip().lower()
    if action not in available_actions:
        raise ReplyError(f"unknown action {action!r}")
    return Decision(
        action=action,
        thinking=_text(fields.get("thinking")),
        reason=_text(fields.get("reason")),
        message_to_others=_text(fields.get("message_to_others")),
        message_to=_text(fields.get("message_to")) or BROADCAST,
    )


def _load_fields(text):
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else [text, _field_block(text)]
    error = None
    for candidate in filter(None, candidates):
        try:
            loaded = yaml.safe_load(candidate)
        except yaml.YAMLError as exc:
            error = exc
            continue
        if isinstance(loaded, dict) and "action" in loaded:
            return loaded
    if error is not None:
        raise ReplyError(f"the reply is not valid YAML ({_first_line(error)})")
    raise ReplyError("the reply has no `action` field")


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


def _text(value):
    return "" if value is None else str(value).strip()


def _first_line(error):
    return str(error).strip().splitlines()[0]
