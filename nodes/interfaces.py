"""What the nodes need from the layers above them, as small interfaces.

The nodes never import `explorer/`: the application gives each agent a
decision policy (the coordinator a coordinator policy), a schedule, its
private memory and a view of the team through its per-agent state, and these
are the contracts those objects meet; what a policy decides from is in
nodes/decision_context.py. Errors that must stop the run are `StopRun`; the
end of a run under way is `RunStopped`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from nodes.decision_context import (
    MESSAGE_CHARS,
    Cell,
    CoordinatorContext,
    DecisionContext,
    Directive,
    DirectiveFollowed,
    Discovery,
    MapNews,
    PoseDict,
    SightReport,
    Wall,
)
from nodes.record import ModelCall, StepRecord
from perception.base import BROADCAST, Message

if TYPE_CHECKING:
    from memory.embedder import PendingRows


class StopRun(RuntimeError):
    """A failure no later step can get past (a refused API key, say); the message is one line."""

    def __init__(self, message: str, users_mistake: bool = False) -> None:
        super().__init__(message)
        self.users_mistake = users_mistake


class RunStopped(Exception):
    """The run was stopped (Ctrl-C, or another agent's failure) while this agent waited for its team."""


# ---- deciding ---------------------------------------------------------------------------------


# Longest text a decision keeps per field, whichever policy made it: a runaway model reply or a policy of
# the user's own must not swell the trace, the prompts and the teammates' mailboxes.
DECISION_TEXT_LIMITS = {"thinking": 1000, "reason": 500, "message_to_others": MESSAGE_CHARS, "message_to": 40}


def cut_text(text: str, limit: int) -> str:
    """`text`, or its first `limit` - 1 characters and "…" where it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Decision:
    """One step's choice: an available action, why, and what to tell the team (`message_to`: a teammate or "all")."""

    action: str
    thinking: str = ""
    reason: str = ""
    message_to_others: str = ""
    message_to: str = BROADCAST

    def to_dict(self) -> dict[str, str]:
        """The decision as its trace line keeps it: a recipient only where there is a message."""
        line = asdict(self)
        if not self.message_to_others:
            del line["message_to"]
        return line

    def bounded(self) -> Decision:
        """This decision with each text cut to DECISION_TEXT_LIMITS."""
        return replace(
            self, **{name: cut_text(getattr(self, name), most) for name, most in DECISION_TEXT_LIMITS.items()}
        )


PLANNER = "planner"  # who decided a step walked towards a model's goal without asking it
DIRECTIVE = "directive"  # who decided a step an explorer took on its coordinator's directive
FALLBACK = "fallback"  # who decided a step the model gave no usable decision for (--fallback offline)


@dataclass(frozen=True)
class DecisionOutcome:
    """What a policy answered, and what it took to get there.

    `decision` is None when no usable decision came (the node then scans);
    `model_calls` holds one record per real model request, with its reply,
    so a built-in policy, which makes none, costs nothing.
    """

    decision: Decision | None
    parse_failure: bool = False  # replies came, none usable
    error: str | None = None  # the policy itself failed (a provider down after its retries): for the trace's errors
    model_calls: tuple[ModelCall, ...] = ()
    notes: tuple[str, ...] = ()  # what was changed in the decision, e.g. an unknown recipient
    # Where a policy decided otherwise than by the prompt it was given: who decided ("planner"
    # for a step walked towards a goal without asking), and the prompt sent ("" for none).
    decided_by: str | None = None
    prompt: str | None = None
    # Under a coordinator: the directive an explorer followed this step, and how.
    directive: DirectiveFollowed | None = None
    # A coordinator's answer: the directives it sends, and the messages it passes on (each from its
    # first sender, to whom it concerns: --comm star and tree).
    directives: tuple[Directive, ...] = ()
    relayed: tuple[Message, ...] = ()


class DecisionPolicy(Protocol):
    """Chooses each step's action from the decision context (and, for a model, the prompt made from it).

    Must be safe to call again with the same arguments (PocketFlow may retry
    exec). Raises StopRun for a failure every later step would meet too.
    """

    name: str  # "offline", "random", or the model's name; the trace records it
    # Whether `decide` reads the memories retrieved for it (`context.memories`, the prompt's). A policy
    # that does not is given none: its steps embed no query and search nothing, and its memory texts
    # are embedded later, in batches (docs/design.md, the seams).
    reads_memories: bool

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome: ...


class CoordinatorPolicy(Protocol):
    """Decides a coordinator's directives each tick, from the explorers' reports and the team's finds.

    Must be safe to call again with the same context; raises StopRun as a DecisionPolicy does.
    """

    name: str  # "offline", or the model's name; the trace records it

    def direct(self, context: CoordinatorContext) -> DecisionOutcome: ...


# ---- remembering -----------------------------------------------------------------------------


class Memory(Protocol):
    """An agent's private memory (memory/vector_memory.py): searched each step for what it knows of
    where it is (where its policy reads memories); a step's memory is embedded while the step goes on,
    or later in a batch, and added once the step is committed."""

    def search(self, query: str, top_k: int) -> list[tuple[str, float]]:
        """(text, distance) of the `top_k` memories nearest `query`, nearest first."""

    def embed_later(self, text: str, searched_soon: bool) -> PendingRows:
        """Start embedding `text` (`searched_soon`: at once, for the next step's search; else whenever
        it is first needed); `add` takes what this returns, done or not."""

    def add(self, text: str, vector: PendingRows) -> None: ...


# ---- the team ------------------------------------------------------------------------------


class TeamView(Protocol):
    """What an agent may read of the team's shared store during a step."""

    def objects(self) -> list[str]: ...

    def discoveries(self) -> dict[str, Discovery]: ...

    def positions(self) -> dict[str, PoseDict | None]: ...

    def map_news(self, since: tuple[int, int]) -> MapNews: ...


class ReportInbox(TeamView, Protocol):
    """What a coordinator reads of the team's store: what every member may, and the reports sent up to it."""

    def read_reports(self, agent_id: str) -> list[SightReport]:
        """The reports that reached the coordinator `agent_id`, in arrival order; reading empties its inbox."""

    def read_mailbox(self, agent_id: str) -> list[Message]:
        """The messages that reached `agent_id` (under a system agent: its word, messages passed up)."""


@dataclass
class StepReport:
    """One agent's finished step, as handed to its team; the commit adds what depends on the team."""

    agent_id: str
    step: int
    record: StepRecord | None  # its trace line; None for a bare step (the stores' and schedules' tests)
    seen_objects: list[str]
    outgoing: list[Message] = field(default_factory=list)
    pose: PoseDict | None = None  # after the action; None for a coordinator's tick
    # Adds the step's memory to the agent's private index; the commit calls it once the step is on record.
    remember: Callable[[], None] = lambda: None
    object_cells: dict[str, Cell] = field(default_factory=dict)  # of the seen objects, where known
    upward: SightReport | None = None  # for the coordinator, where there is one
    # What the step saw (free cells, walls): the team's map gains what no member saw before.
    seen_cells: tuple[Cell, ...] = ()
    seen_walls: tuple[Wall, ...] = ()


class Schedule(Protocol):
    """When a finished step reaches the team, and whether the agent takes another."""

    def hand_in(self, report: StepReport) -> bool:
        """Hand in the step; returns once the team may see it, True if the agent goes on.

        Raises RunStopped when the run is stopped meanwhile.
        """
