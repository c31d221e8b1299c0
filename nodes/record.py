"""The step record: one agent-step's line in trace.jsonl, each node filling its own part."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from time import perf_counter


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
    model_calls: list[dict] = field(default_factory=list)  # written as llm.calls: vision, then decision
    # RetrieveMemoryNode
    memory_query: str = ""
    retrieved_memories: list[list] = field(default_factory=list)  # [text, distance], nearest first
    # CommunicationNode
    messages_in: list[dict] = field(default_factory=list)
    # DecisionNode
    policy: str = ""  # who decided: "offline", "random" or a model's name
    prompt: str = ""
    attempts: list[dict] = field(default_factory=list)  # each model reply, once; empty for the built-in policies
    decision: dict | None = None
    parse_failure: bool = False
    directive: dict | None = None  # an explorer's: the coordinator's directive it followed, and how
    directives: list[dict] = field(default_factory=list)  # a coordinator's: the directives it sent
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
    _clock: float = field(default_factory=perf_counter, repr=False, compare=False)

    def lap(self, node):
        """Time `node` took since the previous node ended (or since the step began)."""
        now = perf_counter()
        self.timings[node] = round(now - self._clock, 4)
        self._clock = now

    def to_dict(self):
        line = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        line["llm"] = {"calls": line.pop("model_calls")}
        return line

    @classmethod
    def from_dict(cls, line):
        """The record `to_dict` gave `line` (a step handed in by another process of the team)."""
        values = {f.name: line[f.name] for f in fields(cls) if f.compare and f.name != "model_calls"}
        return cls(**values, model_calls=line["llm"]["calls"])
