"""The step record: one agent-step's line in trace.jsonl, each node filling its own part; and the
record of each model call it made."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from time import perf_counter
from typing import Any

from nodes.decision_context import Directive, DirectiveFollowed

# The shape of a trace line: 2 keeps each model call whole in `llm.calls`; 1 (no `trace_version`
# field) kept its reply apart, in `attempts` (explorer/records/trace_versions.py reads both).
TRACE_VERSION = 2


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

    def to_dict(self) -> dict[str, Any]:
        line = asdict(self)
        if not self.replayed:
            del line["replayed"]  # the lines of calls made keep their shape
        return line

    @classmethod
    def from_dict(cls, line: Mapping[str, Any]) -> ModelCall:
        """The call `to_dict` gave `line`; TypeError for a field it does not know."""
        return cls(**line)


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

    def lap(self, node: str) -> None:
        """Time `node` took since the previous node ended (or since the step began)."""
        now = perf_counter()
        self.timings[node] = round(now - self._clock, 4)
        self._clock = now

    def to_dict(self) -> dict[str, Any]:
        line: dict[str, Any] = {"trace_version": TRACE_VERSION}
        line.update((f.name, getattr(self, f.name)) for f in fields(self) if f.compare)
        line["llm"] = {"calls": [call.to_dict() for call in line.pop("model_calls")]}
        if self.room is None:
            del line["room"]  # a world without rooms keeps its lines' shape
        for name in SCHEDULE_FIELDS:
            if line[name] is None:
                del line[name]  # likewise a run on a schedule that does not keep it
        return line

    @classmethod
    def from_dict(cls, line: dict[str, Any]) -> StepRecord:
        """The record `to_dict` gave `line` (a step handed in by another process of the team)."""
        kept_if_set = ("room", *SCHEDULE_FIELDS)
        values = {
            f.name: line[f.name] for f in fields(cls) if f.compare and f.name not in ("model_calls", *kept_if_set)
        }
        values |= {name: line.get(name) for name in SCHEDULE_FIELDS}
        calls = [ModelCall.from_dict(call) for call in line["llm"]["calls"]]
        return cls(**values, room=line.get("room"), model_calls=calls)


SCHEDULE_FIELDS = ("think_time", "commit_index", "commit_time", "seen_commits")  # on a line only where set
