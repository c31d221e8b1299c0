"""The step record: one agent-step's line in trace.jsonl, each node filling its own part; and the
record of each model call it made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from time import perf_counter
from typing import Any, TypedDict

from nodes.decision_context import Directive, DirectiveFollowed
from perception.base import Message

# The shape of a trace line: 2 keeps each model call whole in `llm.calls`; 1 (no `trace_version`
# field) kept its reply apart, in `attempts` (explorer/records/trace_versions.py reads both).
TRACE_VERSION = 2
REPLY_KEPT_CHARS = 4_000  # of each model reply, in the trace (with its full length)
# What a step's line keeps of whatever a policy of the user's own, a model or a failure put in it, however long:
# each text cut as a model reply is, saying its full length, and the first items of a list, saying how many it
# had. A line then stays far within what the trace's readers take (explorer/records/trace.py's MAX_LINE_BYTES).
TEXT_KEPT_CHARS = REPLY_KEPT_CHARS  # a failure's message, an error, a note
NAME_KEPT_CHARS = 200  # who decided, a model's name; a call's purpose, reply format and kind of failure
PROMPT_KEPT_CHARS = 100_000  # a prompt made here is a few thousand (nodes/decision_context.py's budget)
ITEMS_KEPT = 20  # of a step's notes, errors and model calls (a model's step makes a few)
RELAYED_KEPT = 100  # of the messages a director passed on in a tick, and of the recipients of each


def excerpt(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, saying how long it was when cut."""
    return text if len(text) <= limit else text[:limit] + _cut_note(len(text))


def is_excerpt(kept: str, length: int) -> bool:
    """True when `kept` is excerpt()'s cut of a text `length` characters long, not the whole of it."""
    return kept.endswith(_cut_note(length))


def _cut_note(length: int) -> str:
    return f"... [{length:,} characters in all]"


_NOTE_ROOM = len(_cut_note(10**18))  # what a cut adds, at most


def kept(value: Any, limit: int) -> Any:
    """A text as a step's line keeps it: whole within `limit` characters, else excerpt()'s cut of it; an excerpt
    made already is kept as it is (a split team's step is made a line twice). Anything else as it is."""
    return value if not isinstance(value, str) or len(value) <= limit + _NOTE_ROOM else excerpt(value, limit)


def _kept_texts(texts: Sequence[Any], what: str) -> list[str]:
    """At most ITEMS_KEPT of `texts`, each as text, kept; where there are more, the last kept says how many."""
    texts_kept = [kept(str(text), TEXT_KEPT_CHARS) for text in texts[:ITEMS_KEPT]]
    if len(texts) > ITEMS_KEPT:
        texts_kept[-1] = f"... {len(texts):,} {what} in all: the first {ITEMS_KEPT - 1} are kept"
    return texts_kept


class Relayed(TypedDict):
    """A message a director passed on (--comm star and tree): its first sender's words, to whom."""

    sender: str  # who wrote it
    to: list[str]  # whom this director passed it to: explorers, a coordinator or the system agent
    message: str


def relayed_lines(messages: Sequence[Message]) -> list[Relayed]:
    """The messages passed on, one entry per text and first sender, with its recipients, in order."""
    lines: dict[tuple[str, str], Relayed] = {}
    for m in messages:
        lines.setdefault((m.sender, m.message), Relayed(sender=m.sender, to=[], message=m.message))["to"].append(
            m.recipient
        )
    return list(lines.values())


@dataclass(frozen=True)
class ModelCall:
    """One request to a language model, as the trace keeps it (an entry of `llm.calls`): what it
    asked for, the reply, what it cost and how it failed; a failed call too."""

    purpose: str  # "decision" or "vision"
    model: str
    format: str  # the reply format the request asked for: "yaml"
    reply: str | None = None  # the reply's text, cut at 4,000 characters; None where none came
    chars: int | None = None  # the reply's full length
    reply_error: str | None = None  # why the reply was refused (it could not be read); None if it was used
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0  # seconds, the whole call with its retries and waits
    retries: int = 0
    cost_usd: float | None = None  # None when unknown
    error: str | None = None  # the kind of failure ("timeout", "not_found", ...); None when a reply came
    error_message: str | None = None  # the failure's one line, secrets redacted
    replayed: bool = False  # answered from an earlier run's record (--replay-replies): no request was made
    # How the schema was sent (json_schema, json_object, ...), and why the server stopped; on the line where known.
    dialect: str | None = None
    finish_reason: str | None = None
    # The reply's fields left out because they gave back the prompt's own instructions (explorer/policies/echoes.py).
    echoed: tuple[str, ...] = ()

    def bounded(self) -> ModelCall:
        """This call as a step's line keeps it: its reply cut as REPLY_KEPT_CHARS, with its full length; its
        other texts cut likewise."""
        named = ("purpose", "model", "format", "error", "dialect", "finish_reason")
        names = {name: kept(getattr(self, name), NAME_KEPT_CHARS) for name in named}
        reply, chars = kept(self.reply, REPLY_KEPT_CHARS), self.chars
        if chars is None and isinstance(self.reply, str) and reply is not self.reply:
            chars = len(self.reply)  # a policy of the user's own may not have said
        return replace(
            self,
            **names,
            reply=reply,
            chars=chars,
            reply_error=kept(self.reply_error, TEXT_KEPT_CHARS),
            error_message=kept(self.error_message, TEXT_KEPT_CHARS),
        )

    def to_dict(self) -> dict[str, Any]:
        line = asdict(self)
        if not self.replayed:
            del line["replayed"]  # the lines of calls made keep their shape
        for name in ("dialect", "finish_reason"):
            if line[name] is None:
                del line[name]  # likewise a call with no schema, or a server that did not say
        if self.echoed:
            line["echoed"] = list(self.echoed)
        else:
            del line["echoed"]  # and one whose reply gave nothing back
        return line

    @classmethod
    def from_dict(cls, line: Mapping[str, Any]) -> ModelCall:
        """The call `to_dict` gave `line`; TypeError for a field it does not know."""
        return cls(**{**line, "echoed": tuple(line.get("echoed", ()))})


@dataclass
class StepRecord:
    agent_id: str
    step: int
    # PerceptionNode
    time: float | None = None  # on a simulated clock (the event schedule): when the agent looked
    observed_time: float | None = None  # and the time its view shows (earlier by its obs_delay)
    pose: dict | None = None  # at the start of the step
    visible_objects: list[str] = field(default_factory=list)
    object_cells: dict[str, list[int]] = field(default_factory=dict)  # where each one is, in mock mode
    visible_caption: str = ""
    image_path: str | None = None  # the screenshot, in Unity mode
    seen_cells: list[list[int]] = field(default_factory=list)  # [x, y, level] in sight, in mock mode
    seen_walls: list[list[int]] = field(default_factory=list)  # [x, y] of the walls in sight, in mock mode
    room: str | None = None  # the room it stands in; the line has no `room` where it stands in none
    model_calls: list[ModelCall] = field(default_factory=list)  # written as llm.calls: vision, then decision
    # RetrieveMemoryNode
    memory_query: str = ""
    retrieved_memories: list[list] = field(default_factory=list)  # [text, distance], nearest first
    # CommunicationNode
    messages_in: list[dict] = field(default_factory=list)
    # DecisionNode
    policy: str = ""  # who decided: "offline", "random" or a model's name
    prompt: str = ""
    decision: dict | None = None
    parse_failure: bool = False
    directive: DirectiveFollowed | None = None  # an explorer's: the coordinator's directive it followed, and how
    directives: list[Directive] = field(default_factory=list)  # a coordinator's: the directives it sent
    relayed: list[Relayed] = field(default_factory=list)  # a director's: the messages it passed on, and to whom
    # ExecutionNode
    action: str | None = None
    result: dict | None = None
    message_out: dict | None = None
    notes: list[str] = field(default_factory=list)
    # UpdateMemoryNode
    memory_text: str = ""
    # Every node
    timings: dict[str, float] = field(default_factory=dict)  # seconds per node, prep to post
    errors: list[str] = field(default_factory=list)
    # The team's commit
    new_objects: list[str] = field(default_factory=list)
    # Set by a schedule that keeps them, else None and not on the line (SCHEDULE_FIELDS): the simulated
    # seconds its decision took (a profile's think_time, --schedule event); under --schedule realtime, its
    # place in the team's commit order, the clock when it was committed, and how many commits the team's
    # state held when it perceived (a replay commits in that order, and shows each step what it saw).
    think_time: float | None = None
    commit_index: int | None = None
    commit_time: float | None = None
    seen_commits: int | None = None
    _clock: float = field(default_factory=perf_counter, repr=False, compare=False)

    @property
    def laps_ended(self) -> float:
        """When its last node ended (perf_counter): with `timings`, when each of its nodes ran."""
        return self._clock

    def lap(self, node: str, waited: float = 0.0) -> None:
        """Time `node` took since the previous node ended (or since the step began), less the `waited`
        seconds it spent waiting for a slot on the cores, which are kept apart as `{node}_wait`."""
        now = perf_counter()
        self.timings[node] = round(now - self._clock - waited, 4)
        if waited:
            self.timings[f"{node}_wait"] = round(waited, 4)
        self._clock = now

    def to_dict(self) -> dict[str, Any]:
        """The step's line in the trace, each text a policy or a failure put in it kept within bounds
        (TEXT_KEPT_CHARS and the rest, above)."""
        line: dict[str, Any] = {"trace_version": TRACE_VERSION}
        line.update((f.name, getattr(self, f.name)) for f in fields(self) if f.compare)
        calls = line.pop("model_calls")
        line["llm"] = {"calls": [call.bounded().to_dict() for call in calls[:ITEMS_KEPT]]}
        more_calls = [f"... {len(calls):,} model calls: the first {ITEMS_KEPT} are kept"] * (len(calls) > ITEMS_KEPT)
        relayed, more_relayed = _kept_relayed(self.relayed)
        line["relayed"] = relayed
        line["notes"] = _kept_texts([*self.notes, *more_calls, *more_relayed], "notes")
        line["errors"] = _kept_texts(self.errors, "errors")
        line["policy"] = kept(self.policy, NAME_KEPT_CHARS)
        line["prompt"] = kept(self.prompt, PROMPT_KEPT_CHARS)
        if self.room is None:
            del line["room"]  # a world without rooms keeps its lines' shape
        if not relayed:
            del line["relayed"]  # likewise a step that passed nothing on: an explorer's, or a quiet director's
        for name in SCHEDULE_FIELDS:
            if line[name] is None:
                del line[name]  # likewise a run on a schedule that does not keep it
        return line

    @classmethod
    def from_dict(cls, line: dict[str, Any]) -> StepRecord:
        """The record `to_dict` gave `line` (a step handed in by another process of the team)."""
        kept_if_set = ("room", "relayed", *SCHEDULE_FIELDS)
        values = {
            f.name: line[f.name] for f in fields(cls) if f.compare and f.name not in ("model_calls", *kept_if_set)
        }
        values |= {name: line.get(name) for name in SCHEDULE_FIELDS}
        calls = [ModelCall.from_dict(call) for call in line["llm"]["calls"]]
        return cls(**values, room=line.get("room"), relayed=line.get("relayed", []), model_calls=calls)


def _kept_relayed(relayed: Sequence[Relayed]) -> tuple[list[Relayed], list[str]]:
    """The first RELAYED_KEPT messages passed on, each with its first RELAYED_KEPT recipients; a note where
    that left any out."""
    kept_lines = [Relayed(sender=r["sender"], to=r["to"][:RELAYED_KEPT], message=r["message"]) for r in relayed]
    cut = len(relayed) > RELAYED_KEPT or any(len(r["to"]) > RELAYED_KEPT for r in relayed)
    note = f"... {len(relayed):,} messages passed on: the first {RELAYED_KEPT}, to their first {RELAYED_KEPT} recipients, are kept"
    return kept_lines[:RELAYED_KEPT], [note] * cut


SCHEDULE_FIELDS = ("think_time", "commit_index", "commit_time", "seen_commits")  # on a line only where set
