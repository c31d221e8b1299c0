"""The perception interface every backend meets, and the values it passes around."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace

from perception.actions import ACTIONS
from perception.room_sight import RoomSight

BROADCAST = "all"  # a message's recipient when it is for every other agent
FACINGS = ("north", "east", "south", "west")  # clockwise; north is +y
FACING_VECTORS = {"north": (0, 1), "east": (1, 0), "south": (0, -1), "west": (-1, 0)}


def objects_text(names, cells):
    """'sofa at (3, 4, 0), lamp' : each object, with its cell where it is known."""
    return ", ".join(f"{name} at ({', '.join(map(str, cells[name]))})" if name in cells else name for name in names)


def turn(facing, quarters):
    """The facing after `quarters` quarter turns clockwise (negative turns left)."""
    return FACINGS[(FACINGS.index(facing) + quarters) % len(FACINGS)]


@dataclass(frozen=True)
class Pose:
    """Where an agent is and how its head is turned."""

    x: int
    y: int
    z: int = 0
    facing: str = "north"
    pitch: int = 0  # -1 looks a level down, +1 a level up
    roll: int = 0  # changes nothing that is seen

    @property
    def cell(self):
        return (self.x, self.y, self.z)

    def moved(self, **changes):
        return replace(self, **changes)

    def to_dict(self):
        return {
            "position": [self.x, self.y, self.z],
            "facing": self.facing,
            "pitch": self.pitch,
            "roll": self.roll,
        }

    @classmethod
    def from_dict(cls, data):
        x, y, z = data["position"]
        return cls(x, y, z, data["facing"], data.get("pitch", 0), data.get("roll", 0))

    def describe(self):
        return f"({self.x}, {self.y}, {self.z}) facing {self.facing}, pitch {self.pitch:+d}, roll {self.roll:+d}"


@dataclass(frozen=True)
class Observation:
    """What one agent perceives at the start of a step."""

    pose: Pose
    visible_objects: tuple[str, ...]
    caption: str
    # Mock worlds also report the cells in sight, as a depth sensor would:
    # free cells as (x, y, level) and wall cells as (x, y). Empty elsewhere.
    seen_cells: tuple[tuple[int, int, int], ...] = ()
    seen_walls: tuple[tuple[int, int], ...] = ()
    # Where each visible object is, as (x, y, level), where the backend knows (mock worlds).
    object_cells: dict = field(default_factory=dict)
    image_path: str | None = None
    # What seeing cost where a model looks at a screenshot: one accounting dict
    # per model call (as the trace keeps it), and its failures.
    model_calls: tuple[dict, ...] = ()
    errors: tuple[str, ...] = ()
    # On a simulated clock (the event schedule): when the agent looked, and the time its view shows.
    time: float | None = None
    observed_time: float | None = None
    # The agent's own actions the view does not show yet, oldest first (late, or landed after the view's time).
    actions_unseen: tuple[str, ...] = ()
    # The room it is in and the doors it sees out of it, where the world has rooms (mock worlds).
    rooms: RoomSight | None = None


@dataclass(frozen=True)
class Message:
    """A message between agents, delivered through the team's store."""

    sender: str
    recipient: str  # an agent id, or BROADCAST
    message: str
    step: int | None = None
    # On a simulated clock (the event schedule): when it was sent, and when it reached the mailbox.
    sent_at: float | None = None
    delivered_at: float | None = None

    def to_dict(self):
        return {
            "sender": self.sender,
            "recipient": self.recipient,
            "message": self.message,
            "step": self.step,
            "sent_at": self.sent_at,
            "delivered_at": self.delivered_at,
        }


@dataclass(frozen=True)
class ActionResult:
    """The outcome of one action: `moved`, `turned`, `blocked` or `unavailable` (`pending` on a clock with act_delay)."""

    action: str
    outcome: str
    pose: Pose
    detail: str = ""
    # Game mode: the share of the view the action changed, and the frames just before and after it.
    view_change: float | None = None
    frames: dict | None = None

    def to_dict(self):
        line = {"action": self.action, "outcome": self.outcome, "detail": self.detail, "pose": self.pose.to_dict()}
        if self.frames is not None:
            line.update(view_change=self.view_change, frames=self.frames)
        return line


@dataclass
class EnvironmentInfo:
    """Global facts about the world an agent may be told."""

    name: str
    size: tuple[int, int, int] | None = None  # (W, D, H); None when unknown
    view_distance: int | None = None
    max_steps: int | None = None
    total_objects: int | None = None  # None where the objects are not known
    total_cells: int | None = None  # the free cells (x, y, level) there are to see; None where unknown
    dead_reckoned: bool = False  # poses counted from the actions taken, not measured
    targets: tuple[str, ...] = ()  # what the task asks the team to find (perception/targets.py); () for none


class PerceptionStopped(RuntimeError):
    """The backend cannot go on (its window is gone, say); the message is one line."""


class PerceptionInterface(ABC):
    """How nodes see and act, whatever the backend.

    Messages reach an agent through the team's store, which every backend is
    given; a backend with its own channel may override `poll_messages`. They
    are sent by the team's step commit, so that a message sent in step k
    arrives in step k + 1 whichever agent finishes first.
    """

    def __init__(self, store):
        self.store = store

    @abstractmethod
    def get_visible_objects(self, agent_id, position=None) -> list[str]:
        """Names of the objects the agent sees now."""

    @abstractmethod
    def get_agent_state(self, agent_id) -> Pose:
        """The agent's current pose."""

    @abstractmethod
    def execute_action(self, agent_id, action, params=None) -> ActionResult:
        """Carry out one action and return its outcome with the new pose."""

    @abstractmethod
    def get_environment_info(self) -> EnvironmentInfo:
        """Global information about the world."""

    def available_actions(self, agent_id) -> tuple[str, ...]:
        return ACTIONS

    def observe(self, agent_id, step=None) -> Observation:
        """Pose and sight at the start of `step`; backends that see more override this."""
        objects = tuple(self.get_visible_objects(agent_id))
        caption = f"I see {', '.join(objects)}." if objects else "I see nothing notable."
        return Observation(self.get_agent_state(agent_id), objects, caption)

    def poll_messages(self, agent_id) -> list[Message]:
        """The agent's new messages, in arrival order; reading empties its mailbox."""
        return self.store.read_mailbox(agent_id)
