"""What each dialect of constrained output is sent: the one declaration of a reply (schemas.py), shaped.

- `json_schema`, strict (OpenAI, Azure OpenAI): strict mode takes a subset of JSON Schema. Every property is
  required (one that may be left out is made nullable instead), every object says
  `additionalProperties: false`, and no length, count or range bound is sent: Azure's documentation lists
  `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`, `minItems`, `maxItems` among the keywords strict
  mode refuses, and OpenAI's names no string length bound at all (docs/models.md cites both).
- `json_schema_bounded`: the same request with the bounds kept, tried first on a server of one's own (an
  OpenAI-compatible model with `--api-base`: llama.cpp's `llama-server`, vLLM), which turns them into its
  grammar. Sent strict mode's subset, SmolLM2 behind llama-server wrote a goal's reason until the token limit
  (600 tokens where 40 do); one that refuses the bounds is sent strict mode's subset next.
- `json_object` with `schema` (llama-cpp-python's server) and Ollama's `format` (through litellm's
  `ollama_chat/` provider, which sends a `json_schema` response_format's schema as `format`): both
  turn the schema into a llama.cpp grammar, which takes the bounds, so they get the whole declaration.

A bound a dialect cannot carry is enforced when the reply is read, as it always is (reading.py's
`bounded_text`): a schema constrains decoding, it does not vouch for the reply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.model.schemas import JsonSchema

# What no strict mode is sent: the bounds (kept on reading) and what the providers' subset leaves out.
STRICT_REFUSED = frozenset(
    {
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)
_SUBSCHEMAS = ("items", "anyOf")


@dataclass(frozen=True)
class Dialect:
    """One way of asking a server for a reply under a schema."""

    name: str
    shape: Callable[[JsonSchema], JsonSchema]  # the schema as this dialect is sent it
    request: Callable[[JsonSchema, str], dict[str, object]]  # the request's `response_format`, given the shape
    refusal: str  # what a server's refusal of the dialect names


def strict(schema: JsonSchema) -> JsonSchema:
    """`schema` as strict mode takes it: no bound, every object closed, every property required (those
    that were not may be null)."""
    return _closed(schema, STRICT_REFUSED)


def bounded(schema: JsonSchema) -> JsonSchema:
    """`schema` in strict mode's form, its bounds kept: for a server whose grammar takes them."""
    return _closed(schema, frozenset())


def _closed(schema: JsonSchema, left_out: frozenset[str]) -> JsonSchema:
    """Every object of `schema` closed and its properties required (those that were not may be null), with
    the keywords `left_out` left out."""
    shaped = {key: value for key, value in schema.items() if key not in left_out}
    for key in _SUBSCHEMAS:
        if isinstance(shaped.get(key), dict):
            shaped[key] = _closed(shaped[key], left_out)
        elif isinstance(shaped.get(key), list):
            shaped[key] = [_closed(part, left_out) for part in shaped[key]]
    if shaped.get("type") == "object":
        properties = shaped.get("properties", {})
        required = set(shaped.get("required", ()))
        shaped["properties"] = {
            name: _closed(part, left_out) if name in required else _nullable(_closed(part, left_out))
            for name, part in properties.items()
        }
        shaped["required"] = list(properties)
        shaped["additionalProperties"] = False
    return shaped


def _nullable(schema: JsonSchema) -> JsonSchema:
    return {"anyOf": [schema, {"type": "null"}]}


def _whole(schema: JsonSchema) -> JsonSchema:
    return schema


def _json_schema(schema: JsonSchema, name: str) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def _json_object(schema: JsonSchema, name: str) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


def _ollama_format(schema: JsonSchema, name: str) -> dict[str, Any]:
    # litellm's ollama_chat provider sends a json_schema response_format's schema as Ollama's `format`.
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


JSON_SCHEMA = Dialect("json_schema", strict, _json_schema, "response_format")
JSON_SCHEMA_BOUNDED = Dialect("json_schema_bounded", bounded, _json_schema, "response_format")
JSON_OBJECT = Dialect("json_object", _whole, _json_object, "response_format")
OLLAMA_FORMAT = Dialect("ollama_format", _whole, _ollama_format, "format")
OLLAMA_PROVIDERS = ("ollama_chat/", "ollama/")  # litellm maps the schema to `format` for both


def dialects_for(model: str, own_server: bool = False) -> tuple[Dialect, ...]:
    """The dialects `model`'s server may take, in the order they are tried. `own_server`: the model is served
    at an `--api-base` of the user's (a provider's own API is reached without one)."""
    if model.startswith(OLLAMA_PROVIDERS):
        return (OLLAMA_FORMAT,)
    if own_server and model.startswith("openai/"):
        return (JSON_SCHEMA_BOUNDED, JSON_SCHEMA, JSON_OBJECT)
    return (JSON_SCHEMA, JSON_OBJECT)
