"""Reading structured answers out of model replies: one reader for decisions and vision.

Models answer in every shape: a fenced block with prose around it, bare
YAML, JSON (which YAML reads), reasoning in <think> tags, tab indentation,
`backticked` values. All of it is read here, always with a safe loader that
takes no YAML aliases and no deep nesting, and every field is then kept as
bounded text (`bounded_text`): what a reply holds grows with its length only.
A JSON object is read whole, up to MAX_REPLY_CHARS; one cut short there, or
by the token limit, keeps the members it completed (a schema puts the choice
first), never the one it broke off in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import yaml

from nodes.interfaces import cut_text

MAX_REPLY_CHARS = 20_000  # read no further, once over-long lines are cut: an answer is a few lines
LINE_CHARS = 2_000  # a longer line (a runaway `thinking:`) is cut, so the fields after it are still read
_FENCE = re.compile(r"```[ \t]*[\w-]*[ \t]*\n(.*?)```", re.DOTALL)
_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.DOTALL | re.IGNORECASE)
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)
_BACKTICKED_VALUE = re.compile(r"^([ \t]*\w+[ \t]*:[ \t]*)`([^`\n]*)`[ \t]*$", re.MULTILINE)
_KEY_VALUE = re.compile(r"^([ \t]*[\w-]+[ \t]*:[ \t]*)(.*)$", re.DOTALL)
MAX_DEPTH = 20  # nesting levels a reply may hold: an answer needs three or four
LIST_ITEMS = 50  # items of a flat list kept as a field's text


class ReplyError(ValueError):
    """The reply holds nothing usable; the message says why."""


def read_structured(
    text: str | None,
    usable: Callable[[Any], bool],
    unfenced_block: Callable[[str], str] | None = None,
) -> Any:
    """The first YAML value in the reply that `usable(value)` accepts, or None.

    A fenced block is read if there is one; otherwise the whole text, then
    the block `unfenced_block(text)` cuts out of it (prose dropped). Raises
    ReplyError when a candidate is not valid YAML and none was usable.
    """
    text = _REASONING.sub("", text or "")
    whole = _json_object(text)
    if whole is not None and usable(whole):
        return whole
    text = "\n".join(map(_cut_line, text.split("\n")))[:MAX_REPLY_CHARS]
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else [text, unfenced_block(text) if unfenced_block else ""]
    error = None
    for candidate in filter(None, candidates):
        try:
            loaded = yaml.load(_tidy(candidate), Loader=_ReplyLoader)  # a SafeLoader, bounded
        except yaml.YAMLError as exc:
            error = exc
            continue
        if usable(loaded):
            return loaded
    if error is not None:
        raise ReplyError(f"the reply is not valid YAML ({str(error).strip().splitlines()[0]})")
    return None


def _json_object(text: str) -> dict | None:
    """The reply as a JSON object, where it is one, as a schema asks: read whole (up to MAX_REPLY_CHARS) as
    JSON, not YAML, since a small model's strings may hold raw newlines (and fences) that JSON's strict
    reading and YAML both refuse, and its lines may be longer than a YAML reply's are kept. One cut short
    gives the members it completed."""
    text = text.strip()
    kept = text[:MAX_REPLY_CHARS]
    try:
        value = json.loads(kept, strict=False) if kept == text else None
    except (ValueError, RecursionError):
        value = None
    if value is None and kept.startswith("{") and (kept != text or not kept.endswith("}")):
        value = completed_members(kept)
    # Deep nesting is left to the YAML reader, which refuses it saying so.
    return value if isinstance(value, dict) and _depth(value) <= MAX_DEPTH else None


_JSON = json.JSONDecoder(strict=False)
_SPACE = re.compile(r"\s*")


def completed_members(cut: str) -> dict:
    """The members of the JSON object `cut` begins, up to the first one it does not complete (a member is
    complete once a comma or the closing brace follows it: a number at the cut may have lost digits)."""
    members: dict = {}
    at = 1  # past the "{"
    try:
        while True:
            key, at = _JSON.raw_decode(cut, _past_space(cut, at))
            at = _past_space(cut, at)
            if not isinstance(key, str) or cut[at : at + 1] != ":":
                return members
            value, at = _JSON.raw_decode(cut, _past_space(cut, at + 1))
            at = _past_space(cut, at)
            if cut[at : at + 1] not in (",", "}"):
                return members
            members[key] = value
            if cut[at] == "}":
                return members
            at += 1
    except (ValueError, RecursionError):  # the member it broke off in
        return members


def _past_space(text: str, at: int) -> int:
    space = _SPACE.match(text, at)
    return space.end() if space else at


def _depth(value: Any) -> int:
    """How many levels of nodes `value` has, as YAML's composer counts them: {"a": [1]} has 3."""
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [item for node in level if isinstance(node, (dict, list)) for item in _children(node)]
    return depth


def _children(node: dict | list) -> list:
    return list(node.values()) if isinstance(node, dict) else node


class _ReplyLoader(yaml.SafeLoader):
    """The safe loader, refusing what no answer needs and what could take the machine: aliases (a few
    hundred bytes of them, in lists or `<<` merges, expand exponentially) and deep nesting (the
    composer recurses, once per level)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not allowed in a reply", mark)
        if self.depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, f"it nests more than {MAX_DEPTH} levels deep", mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def bounded_text(value: object, limit: int) -> str:
    """A field as text of at most `limit` characters: a scalar, or a flat list of them ("a; b").

    Anything else (a mapping, a nested list) is dropped: it is no answer to a field, and its text
    could be far longer than the reply.
    """
    if isinstance(value, list) and all(isinstance(item, (str, int, float, bool)) for item in value):
        value = "; ".join(map(str, value[:LIST_ITEMS]))
    if not isinstance(value, (str, int, float, bool)):
        return ""
    return cut_text(str(value).strip(), limit)


def _cut_line(line: str) -> str:
    """A line of at most LINE_CHARS; a `key: value` line stays valid YAML, with its value cut."""
    if len(line) <= LINE_CHARS:
        return line
    key_value = _KEY_VALUE.match(line)
    if not key_value:
        return line[:LINE_CHARS]
    value = key_value.group(2).strip()
    value = value[1:] if value[:1] in ("'", '"') else value
    return key_value.group(1) + json.dumps(value[:LINE_CHARS])  # JSON's quoted string is YAML's too


def _tidy(text: str) -> str:
    """What models write that YAML refuses: tab indentation, `backticked` values."""
    text = _LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), text)
    return _BACKTICKED_VALUE.sub(r"\1\2", text)
