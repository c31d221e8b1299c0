"""Which reply format a model is asked in (`--reply-format auto|json|yaml`), settled once before the run.

Servers speak different dialects of constrained output: OpenAI, vLLM and
llama.cpp's own server take `{"type": "json_schema", ...}`; llama-cpp-python's
server refuses that and takes `{"type": "json_object", "schema": ...}`. So each
distinct model is asked one small probe per dialect, in that order, until one is
accepted and really constrains the reply: the probe asks for the one answer its
schema forbids, so a server that accepts the parameter and ignores it answers
as asked and is not taken for constrained. The dialect found holds for the whole
run, so every prompt of the run is the same on a replay, which makes no probe
and reads the dialect the recorded run settled on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from explorer.model.schemas import JsonSchema

log = logging.getLogger("explorer")

REPLY_FORMATS = ("auto", "json", "yaml")
DIALECTS = ("json_schema", "json_object")
YAML = "yaml"
PROBE_PROMPT = 'Reply with the JSON object {"answer": "no"} and nothing else.'
PROBE_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes"]}},
    "required": ["answer"],
    "additionalProperties": False,
}
PROBE_MAX_TOKENS = 16


class FormatRefused(Exception):
    """The server refused the request's response_format (a 400 or 422 naming it)."""


@dataclass(frozen=True)
class ReplyFormat:
    """How one model is asked: `dialect` is a DIALECTS entry for JSON under a schema, or "yaml"."""

    dialect: str = YAML

    @property
    def name(self) -> str:
        """What the trace and summary call it: "json" or "yaml"."""
        return YAML if self.dialect == YAML else "json"

    def response_format(self, schema: JsonSchema, name: str) -> dict[str, object] | None:
        """The request's `response_format` for `schema` in this dialect; None for YAML."""
        if self.dialect == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        if self.dialect == "json_object":
            return {"type": "json_object", "schema": schema}
        return None


# A probe: (response_format, prompt, max_tokens) -> the reply's text; raises FormatRefused.
Probe = Callable[[dict[str, object], str, int], str]


def settle(requested: str, model: str, probe: Probe, schema_known: bool | None) -> ReplyFormat:
    """The format `model` is asked in for the run.

    `requested` is --reply-format; `schema_known` is whether litellm's table says the
    model accepts a response schema (None: a model it does not know, such as a local one).
    With "auto", a model the table says cannot is asked in YAML without a probe.
    """
    if requested == YAML or (requested == "auto" and schema_known is False):
        return ReplyFormat()
    for dialect in DIALECTS:
        fmt = ReplyFormat(dialect)
        try:
            text = probe(fmt.response_format(PROBE_SCHEMA, "probe") or {}, PROBE_PROMPT, PROBE_MAX_TOKENS)
        except FormatRefused as refused:
            log.info("%s refused response_format %s: %s", model, dialect, refused)
            continue
        if _constrained(text):
            log.info("%s: replies constrained by a JSON schema (response_format %s)", model, dialect)
            return fmt
        log.info("%s accepted response_format %s but did not follow it: %r", model, dialect, text[:80])
    log.warning("%s takes no JSON schema in any dialect (%s): its replies are read as YAML", model, ", ".join(DIALECTS))
    return ReplyFormat()


def _constrained(text: str) -> bool:
    """True when the probe's reply is what only its schema allows."""
    try:
        return json.loads(text) == {"answer": "yes"}
    except ValueError:
        return False
