"""Which reply format an agent's model is asked in (`--reply-format auto|json|yaml`), learnt as it goes.

Servers speak different dialects of constrained output: OpenAI, vLLM and
llama.cpp's own server take `{"type": "json_schema", ...}`; llama-cpp-python's
server refuses that with a 422 and takes `{"type": "json_object", "schema": ...}`.
So a request under a schema is sent in the first dialect not yet refused; a
refusal (a 400 or 422 naming `response_format`) moves the agent to the next,
and the same call is asked again at once. A server that refuses every dialect
is asked without a schema from then on, and so is one that accepts the
parameter and ignores it: a reply under a schema that does not even begin as a
JSON object is proof that decoding was not constrained (one that begins as one
and breaks off, cut short by the token limit or the server, proves nothing). Each agent learns for itself, so what
one agent's calls meet never changes another's. The prompt is the same in
every format (its YAML example); only the request's `response_format` differs,
so a run replayed from its trace asks the same prompts.
"""

from __future__ import annotations

import logging
import threading

from explorer.model.schemas import JsonSchema

log = logging.getLogger("explorer")

REPLY_FORMATS = ("auto", "json", "yaml")
DIALECTS = ("json_schema", "json_object")
YAML, JSON = "yaml", "json"


class NoSchemaAccepted(Exception):
    """--reply-format json, and the server takes a JSON schema in no dialect."""


class ReplyFormat:
    """One agent's reply format for one model: the dialect its next request under a schema is sent in."""

    def __init__(self, requested: str, model: str, schema_known: bool | None = None) -> None:
        """`schema_known`: whether litellm's table says `model` takes a response schema (None: unknown,
        such as a local server's model). With "auto", a model the table says cannot is asked in YAML."""
        self.requested = requested
        self.model = model
        no_schema = requested == YAML or (requested == "auto" and schema_known is False)
        self._dialects = [] if no_schema else list(DIALECTS)
        self._lock = threading.Lock()  # a retried exec may overlap the call it retries

    @property
    def dialect(self) -> str | None:
        """The dialect the next request under a schema is sent in; None: no schema (YAML)."""
        with self._lock:
            return self._dialects[0] if self._dialects else None

    def response_format(self, schema: JsonSchema, name: str) -> tuple[str | None, dict[str, object] | None]:
        """(dialect, the request's `response_format`) for `schema`; (None, None) for YAML."""
        dialect = self.dialect
        if dialect == "json_schema":
            return dialect, {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        if dialect == "json_object":
            return dialect, {"type": "json_object", "schema": schema}
        return None, None

    def refused(self, dialect: str, detail: str) -> None:
        """The server refused `dialect`: the next request goes in the next one, or without a schema."""
        with self._lock:
            if self._dialects[:1] != [dialect]:
                return  # another call of this agent has already moved on
            self._dialects.pop(0)
            left = list(self._dialects)
        log.info("%s refused response_format %s (%s)", self.model, dialect, detail)
        if left:
            return
        if self.requested == JSON:
            raise NoSchemaAccepted(
                f"--reply-format json: {self.model} takes a JSON schema in no dialect ({', '.join(DIALECTS)}); "
                "use --reply-format auto or yaml"
            )
        log.warning("%s takes no JSON schema: its replies are asked for and read as YAML", self.model)

    def answered(self, dialect: str | None, text: str) -> None:
        """A reply came under `dialect`; one that does not begin as a JSON object shows the schema was ignored."""
        if dialect is None or text.lstrip().startswith("{"):
            return
        with self._lock:
            if not self._dialects:
                return
            self._dialects.clear()
        log.warning(
            "%s accepted response_format %s but did not follow it: its replies are read as YAML from now on",
            self.model,
            dialect,
        )
