"""Trace lines of every version this program reads, each made the current version: the one reader of old traces.

Version 2 (`"trace_version": 2`, nodes/record.py) keeps each model call whole,
as one entry of `llm.calls`. Version 1, with no `trace_version` field, kept a
call in three places: what it cost in `llm.calls`; its reply in `attempts`,
one per call that got a reply, in order (vision replies were not kept); and a
failed call's message in the step's `errors` ("decision failed:
LLMError('message')", "vision failed: message"). A version-1 line is read by
putting them back together; a version this program does not know is refused.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from typing import Any

from explorer.records.shapes import count, flag, list_of, nullable, number, record, text
from nodes.record import TRACE_VERSION, ModelCall

VERSION_1_FORMAT = "yaml"  # the only reply format version 1 asked for
# How version 1 recorded a failed call in the step's errors: the policy's repr, or vision's message.
_DECISION_FAILURE = re.compile(r"\bLLMError\((.*)\)$")
_VISION_FAILURE = re.compile(r"^vision failed: (.*)$")


class TraceVersionError(ValueError):
    """A trace line of a version this program cannot read; the message names the version."""


class DamagedLine(ValueError):
    """A version-1 line whose model calls cannot be put back together: not as version 1 wrote them."""


# What putting a version-1 line's calls back together reads: every field a call had then, and no other.
_VERSION_1_CALL = record(
    {"purpose": text, "model": text, "error": nullable(text)},
    {
        "prompt_tokens": count,
        "completion_tokens": count,
        "latency": number,
        "retries": count,
        "cost_usd": nullable(number),
        "replayed": flag,
    },
    closed=True,
)
_VERSION_1_ATTEMPT = record({"reply": nullable(text), "chars": nullable(count), "error": nullable(text)})
_VERSION_1_LINE = record(
    optional={
        "llm": nullable(record(optional={"calls": nullable(list_of(_VERSION_1_CALL))})),
        "attempts": nullable(list_of(_VERSION_1_ATTEMPT)),
        "errors": nullable(list_of(text)),
    }
)


def current_line(line: dict[str, Any]) -> dict[str, Any]:
    """`line` as this version of the program writes it; TraceVersionError for a version it does not know,
    DamagedLine for a version-1 line that is not as version 1 wrote it."""
    version = line.get("trace_version", 1)
    if version == TRACE_VERSION:
        return line
    if version == 1:
        if not _VERSION_1_LINE(line):
            raise DamagedLine("a version-1 line whose model calls are not as version 1 wrote them")
        return _from_version_1(line)
    raise TraceVersionError(f"trace_version {version!r} is not one this program reads (versions 1 to {TRACE_VERSION})")


def _from_version_1(line: dict[str, Any]) -> dict[str, Any]:
    replies = iter(line.get("attempts") or ())
    errors = line.get("errors") or ()
    calls = [_call_from_version_1(call, replies, errors) for call in (line.get("llm") or {}).get("calls") or ()]
    upgraded = {"trace_version": TRACE_VERSION, **{key: value for key, value in line.items() if key != "attempts"}}
    upgraded["llm"] = {"calls": calls}
    return upgraded


def _call_from_version_1(
    call: dict[str, Any],
    replies: Iterator[dict[str, Any]],
    errors: Sequence[str],
) -> dict[str, Any]:
    """One entry of a version-1 `llm.calls`, with its reply (the next of `replies`, for a decision call
    that got one) or its failure's message (from the step's `errors`)."""
    vision = call["purpose"] == "vision"
    attempt = next(replies, None) if call["error"] is None and not vision else None
    return ModelCall(
        **call,
        format=VERSION_1_FORMAT,
        reply=attempt["reply"] if attempt else None,
        chars=attempt["chars"] if attempt else None,
        reply_error=attempt["error"] if attempt else None,
        error_message=None if call["error"] is None else _failure_message(errors, vision),
    ).to_dict()


def _failure_message(errors: Sequence[str], vision: bool) -> str | None:
    """The message of the step's failed call, as version 1 recorded it; None when it is not there."""
    found = next(filter(None, map((_VISION_FAILURE if vision else _DECISION_FAILURE).search, errors)), None)
    if found is None:
        return None
    if vision:
        return found.group(1)  # the message itself
    try:
        return ast.literal_eval(found.group(1))  # the policy's repr of its LLMError: the message's repr
    except (ValueError, SyntaxError):
        return None
