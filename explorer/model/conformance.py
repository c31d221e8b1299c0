"""Whether a reply is one a decoder held to a schema could have written; the only module that imports jsonschema.

A server that takes a schema and ignores it is known by its replies: one that is
not an instance of the schema it was sent (not JSON, a value the enum does not
hold, a member missing or extra, a bound passed) could not have been decoded
under it. A reply cut short, by the token limit or the server, is judged by the
members it completed: the start of an instance proves nothing either way.
"""

from __future__ import annotations

import json

import jsonschema

from explorer.model.reading import MAX_REPLY_CHARS, completed_members
from explorer.model.schemas import JsonSchema


def could_follow(text: str, schema: JsonSchema) -> bool:
    """Whether `text` is an instance of `schema`, or, cut short inside an object, the start of one."""
    text = text.strip()
    try:
        value = json.loads(text, strict=False) if len(text) <= MAX_REPLY_CHARS else None
    except (ValueError, RecursionError):
        value = None
    if value is not None or not text.startswith("{"):
        return is_instance(value, schema)
    # Cut short: the members it completed, each as the schema allows, none it does not know.
    return is_instance(completed_members(text[:MAX_REPLY_CHARS]), {**schema, "required": []})


def is_instance(value: object, schema: JsonSchema) -> bool:
    """Whether `value` is an instance of `schema` (a reply's JSON, an exported example's)."""
    try:
        return bool(jsonschema.Draft202012Validator(schema).is_valid(value))
    except RecursionError:
        return False
