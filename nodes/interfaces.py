"""What the nodes need from the layers above them, as small interfaces.

The nodes never import `explorer/`: the application gives each agent a
decision policy, a schedule and a view of the team through its per-agent
state, and these are the contracts those objects meet. Errors that must stop
the run are `StopRun`; the end of a run under way is `RunStopped`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Protocol

from perception.base import BROADCAST, Message


class StopRun(RuntimeError):
    """A failure no later step can get past (a refused API key, say); the message is one line."""

    def __init__(self, message, users_mistake=False):
        super().__init__(message)
        self.users_mistake = users_mistake


class RunStopped(Exception):
    """The run was stopped (Ctrl-C, or another agent's failure) while this agent waited for its team."""


# ---- deciding ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """One step's choice (spec section 4); `message_to` is a teammate's id or "all"."""

    action: str
    thinking: str = ""
    reason: str = ""
    message_to_others: str = ""
    message_to: str = BROADCAST

    def to_dict(self):
        return asdict(self)


PLANNER = "planner"  # who decided a step walked towards a model's goal without asking it
DIRECTIVE = "directive"  # who decided a step an explorer took on its coordinator's directive


@dataclass(frozen=True)
class DecisionOutcome:
    """What a policy answered, and what it took to get there.

    `decision` is None when no usable decision came (the node then scans);
    `model_calls` holds one accounting dict per real model request, so a
    built-in policy, which makes none, costs nothing.
    """

    decision: Decision | None
    attempts: tuple[dict, ...] = ()  # per model reply: {"reply": text (bounded), "chars", "error": why refused, or None}
    parse_failure: bool = False  # replies came, none usable
    error: str | None = None  # the policy itself failed (a provider down after its retries)
    model_calls: tuple[dict, ...] = ()
    notes: tuple[str, ...] = ()  # what was changed in the decision, e.g. an unknown recipient
    # Where a policy decided otherwise than by the prompt it was given: who decided ("planner"
    # for a step walked towards a goal without asking), and the prompt sent ("" for none).
    decided_by: str | None = None
    prompt: str | None = None
    # Under a coordinator: the directive an explorer followed this step and how ({id, kind, target, status}).
    directive: dict | None = None
    # A coordinator's answer: the directives it sends ({id, to, kind, target, message}).
    directives: tuple[dict, ...] = ()


class DecisionPolicy(Protocol):
    """Chooses each step's action from the decision context (and, for a model, the prompt made from it).

    Must be safe to call again with the same arguments (PocketFlow may retry
    exec). Raises StopRun for a failure every later step would meet too.
    """

    name: str  # "offline", "random", or the model's name; the trace records it

    def decide(self, prompt: str, context: dict) -> DecisionOutcome: ...


# ---- the team ------------------------------------------------------------------------------


class TeamView(Protocol):
    """What an agent may read of the team's shared store during a step."""

    def objects(self) -> list[str]: ...

    def discoveries(self) -> dict[str, dict]: ...

    def positions(self) -> dict[str, dict]: ...


@dataclass
class StepReport:
    """One agent's finished step, as handed to its team; the commit adds what depends on the team."""

    agent_id: str
    step: int
    record: object  # nodes.record.StepRecord
    seen_objects: list[str]
    outgoing: list[Message] = field(default_factory=list)
    pose: dict = field(default_factory=dict)  # after the action
    # Adds the step's memory to the agent's private index; the commit calls it once the step is on record.
    remember: Callable[[], None] = lambda: None
    object_cells: dict = field(default_factory=dict)  # name -> (x, y, level) of the seen objects, where known
    upward: SightReport | None = None  # for the coordinator, where there is one


@dataclass(frozen=True)
class SightReport:
    """What an explorer sends up to its coordinator each step: where it is and what it saw from where."""

    sender: str
    step: int
    seen_from: dict  # the pose it looked from
    pose: dict  # after its action
    seen_cells: tuple = ()
    seen_walls: tuple = ()
    object_cells: dict = field(default_factory=dict)
    said: str = ""  # what it told the team this step: the coordinator reads its intent there too
    sent_at: float | None = None
    delivered_at: float | None = None


class Schedule(Protocol):
    """When a finished step reaches the team, and whether the agent takes another."""

    def hand_in(self, report: StepReport) -> bool:
        """Hand in the step; returns once the team may see it, True if the agent goes on.

        Raises RunStopped when the run is stopped meanwhile.
        """
