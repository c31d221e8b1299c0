"""Which reply format an agent's model is asked in (`--reply-format auto|json|yaml`), learnt as it goes.

Servers speak different dialects of constrained output (dialects.py): OpenAI,
vLLM and llama.cpp's own server take `{"type": "json_schema", ...}` (a server of
the user's own, at `--api-base`, is sent the schema's bounds in it too); llama-cpp-python's
server refuses that with a 422 and takes `{"type": "json_object", "schema": ...}`;
Ollama takes the schema as `format`.
So a request under a schema is sent in the first of its model's dialects not
yet refused, the schema shaped for it; a refusal (a 400 or 422 naming the
dialect's parameter) moves the agent to the next, and the same call is asked
again at once. A server that refuses every dialect is asked without a schema
from then on, and so is one that accepts the parameter and ignores it: a reply
that is not an instance of the schema it was sent proves that decoding was not
constrained (conformance.py; one cut short inside its object, by the token
limit or the server, is judged by the members it completed). Under
`--reply-format json` neither happens: a server that takes no schema stops the
run, and one that ignores it is asked under it still, each reply that is not an
instance of it read as a reply the agent could not use. Each agent learns
for itself, so what one agent's calls meet never changes another's. Its prompts
describe the reply in the syntax its requests go in (`syntax()`): JSON under a
schema, YAML without; a replay asks in the syntax the recorded prompts did.
"""

from __future__ import annotations

import logging
import threading
from typing import NamedTuple

from explorer.model.conformance import could_follow
from explorer.model.dialects import Dialect, dialects_for
from explorer.model.schemas import JsonSchema
from prompts import JSON, YAML

log = logging.getLogger("explorer")

REPLY_FORMATS = ("auto", "json", "yaml")
OFF_SCHEMA = "an instance of the JSON schema it was asked under"  # what a reply off it is not


class NoSchemaAccepted(Exception):
    """--reply-format json, and the server takes a JSON schema in no dialect."""


class Constrained(NamedTuple):
    """A request under a schema: its dialect, its `response_format`, and the schema as that dialect was sent it."""

    dialect: str
    response_format: dict[str, object]
    schema: JsonSchema


class ReplyFormat:
    """One agent's reply format for one model: the dialect its next request under a schema is sent in."""

    def __init__(self, requested: str, model: str, schema_known: bool | None = None, own_server: bool = False) -> None:
        """`schema_known`: whether litellm's table says `model` takes a response schema (None: unknown,
        such as a local server's model). With "auto", a model the table says cannot is asked in YAML.
        `own_server`: the model is served at an `--api-base` of the user's (dialects_for)."""
        self.requested = requested
        self.model = model
        self._offered = dialects_for(model, own_server)
        no_schema = requested == YAML or (requested == "auto" and schema_known is False)
        self._dialects: list[Dialect] = [] if no_schema else list(self._offered)
        self._lock = threading.Lock()  # a retried exec may overlap the call it retries

    @property
    def dialect(self) -> str | None:
        """The dialect the next request under a schema is sent in; None: no schema (YAML)."""
        with self._lock:
            return self._dialects[0].name if self._dialects else None

    def syntax(self) -> str:
        """The syntax the agent's next prompt asks its reply in: JSON while its requests go under a schema."""
        return YAML if self.dialect is None else JSON

    def constrained(self, schema: JsonSchema, name: str) -> Constrained | None:
        """The next request under `schema`, in the agent's dialect; None for YAML."""
        with self._lock:
            dialect = self._dialects[0] if self._dialects else None
        if dialect is None:
            return None
        shaped = dialect.shape(schema)
        return Constrained(dialect.name, dialect.request(shaped, name), shaped)

    def refuses(self, dialect: str, detail: str) -> bool:
        """Whether a failure's `detail` is the server refusing `dialect` (it names the dialect's parameter)."""
        return any(known.name == dialect and known.refusal in detail for known in self._offered)

    def refused(self, dialect: str, detail: str) -> None:
        """The server refused `dialect`: the next request goes in the next one, or without a schema."""
        with self._lock:
            if not self._dialects or self._dialects[0].name != dialect:
                return  # another call of this agent has already moved on
            self._dialects.pop(0)
            left = list(self._dialects)
        log.info("%s refused response_format %s (%s)", self.model, dialect, detail)
        if left:
            return
        if self.requested == JSON:
            tried = ", ".join(known.name for known in self._offered)
            raise NoSchemaAccepted(
                f"--reply-format json: {self.model} takes a JSON schema in no dialect ({tried}); "
                "use --reply-format auto or yaml"
            )
        log.warning("%s takes no JSON schema: its replies are asked for and read as YAML", self.model)

    def answered(self, asked: Constrained | None, text: str) -> bool:
        """Whether a reply that came as `asked` is an instance of the schema sent (True where none was).
        One that is not shows the schema was ignored: under "auto" the agent is asked in YAML from then on (and
        this reply is read as any YAML one is: True); under "json" it stays under the schema, and the caller
        counts the reply as one it could not read (False)."""
        if asked is None or could_follow(text, asked.schema):
            return True
        if self.requested == JSON:
            return False
        with self._lock:
            if not self._dialects:
                return True  # another call of this agent has learnt it already; this reply is read as ever
            self._dialects.clear()
        log.warning(
            "%s accepted response_format %s but did not follow it: its replies are read as YAML from now on",
            self.model,
            asked.dialect,
        )
        return True
