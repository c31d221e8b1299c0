"""What a decision rests on: the context every policy reads, and the prompt a model reads.

The nodes build the contexts from the agent's state each step
(nodes/context_from_state.py): a DecisionContext for an explorer, a
CoordinatorContext for the coordinator, which reads the explorers'
SightReports. They are frozen: a policy reads them, and never changes them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from perception.actions import ACTION_HELP
from perception.base import Pose, objects_text
from perception.room_sight import RoomSight
from perception.rooms import Room
from perception.targets import missing_targets, spoken
from prompts import JSON, how_to_reply, render

RECENT_ACTIONS = 5
# The prompt's budget: whatever the step, team size or world, it holds at most
# this much, so the request at step 200 is the size of the one at step 10.
PROMPT_MESSAGES = 6  # the newest; older ones are counted, not shown
PROMPT_TEAM_OBJECTS = 30  # the latest found
PROMPT_TEAMMATES = 8  # the nearest; the others are counted
MEMORY_CHARS = 300  # per retrieved memory
MESSAGE_CHARS = 300
CAPTION_CHARS = 600
ROOM_NAME_CHARS = 60  # per room named (a world file's names may be long)

Cell = tuple[int, int, int]  # (x, y, level)
Wall = tuple[int, int]  # (x, y): a wall stands on every level


# ---- the dict-shaped parts, as the team's store and the trace keep them -----------------------


class PoseDict(TypedDict):
    """A pose as the team's store and the trace keep it (perception.base.Pose.to_dict)."""

    position: list[int]  # [x, y, level]
    facing: str
    pitch: int
    roll: int


class Discovery(TypedDict):
    """An object the team found: who found it, at which step, and its cell [x, y, level], where known."""

    finder: str | None
    step: int | None
    cell: list[int] | None


class HeardMessage(TypedDict):
    """A message an agent read this step; `recipient` is its id, or "all"."""

    sender: str
    recipient: str
    message: str


class ActionTaken(TypedDict):
    """One of the agent's past steps: the action, how it went, and what it said then."""

    step: int
    action: str
    outcome: str
    detail: str
    message: str


DirectiveTarget = list[int | str | None] | str  # [x, y, level, facing or None] to look from, or an action to take


class Directive(TypedDict):
    """What a coordinator tells one explorer: numbered in order; `message` is the sentence sent, `reason`
    why (the trace's and the report's, as an explorer's decision has one; the explorer is sent `message`)."""

    id: int
    to: str
    kind: str  # "goal" or "action"
    target: DirectiveTarget
    message: str
    reason: str


class DirectiveFollowed(TypedDict):
    """The directive an explorer followed this step; `status` says how it went ("followed", "done",
    "outdated", "unreachable", "unavailable"), `replaced` the ids of those it replaced."""

    id: int
    kind: str
    target: DirectiveTarget
    replaced: list[int]
    status: str


@dataclass(frozen=True)
class SightReport:
    """What an explorer sends up to its coordinator each step: where it is and what it saw from where."""

    sender: str
    step: int
    seen_from: PoseDict  # the pose it looked from
    pose: PoseDict  # after its action
    seen_cells: tuple[Cell, ...] = ()
    seen_walls: tuple[Wall, ...] = ()
    object_cells: dict[str, Cell] = field(default_factory=dict)
    said: str = ""  # what it told the team this step: the coordinator reads its intent there too
    sent_at: float | None = None
    delivered_at: float | None = None


# ---- the contexts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TeamContext:
    """Who decides, when and where: what every member's decision rests on, an explorer's or a coordinator's."""

    agent_id: str
    members: tuple[str, ...]  # every agent id (for a coordinator: the explorers it directs), in agent order
    step: int
    max_steps: int
    world: str
    size: tuple[int, int, int] | None  # (W, D, H); None when unknown
    view_distance: int | None
    discoveries: Mapping[str, Discovery]  # the team's finds, in discovery order
    targets: tuple[str, ...] = ()  # a search task's: what the team must find (perception/targets.py)


@dataclass(frozen=True)
class AgentSetup:
    """What the agent was given at the start: its part in the team, whether it may talk, who directs it."""

    role: str
    persona: str
    comm_enabled: bool
    coordinator: str | None  # the coordinator's id, where there is one


@dataclass(frozen=True)
class View:
    """What the agent perceives this step (perception.base.Observation)."""

    pose: Pose
    dead_reckoned: bool  # the pose is counted from the actions taken, not measured
    visible_objects: tuple[str, ...]
    object_cells: Mapping[str, Cell]  # where each visible object is, where the backend knows
    caption: str
    seen_cells: tuple[Cell, ...]  # the free cells in sight, in mock mode
    seen_walls: tuple[Wall, ...]  # the walls in sight, in mock mode
    actions_unseen: tuple[str, ...]  # its own actions the view does not show yet, oldest first
    rooms: RoomSight | None = None  # its room and the doors it sees, where the world has rooms
    rooms_entered: tuple[str, ...] = ()  # the rooms it has stood in, by name


class TeammatePoses(Mapping[str, Pose | None]):
    """The teammates' poses by id, in team order (None where not known), kept as the team's store keeps
    them and made Pose objects only as they are read: of a thousand teammates, an agent's step reads the
    few nearest (`nearest`), and a step's work stays the same whatever the team's size."""

    def __init__(self, poses: Mapping[str, PoseDict | None]) -> None:
        self._poses = poses
        self._read: dict[str, Pose | None] = {}
        self._nearest: dict[tuple[Cell, int], tuple[str, ...]] = {}

    @classmethod
    def of(cls, poses: Mapping[str, Pose | None]) -> TeammatePoses:
        return cls({agent: pose.to_dict() if pose else None for agent, pose in poses.items()})

    def __getitem__(self, agent: str) -> Pose | None:
        if agent not in self._read:
            pose = self._poses[agent]
            self._read[agent] = Pose.from_dict(pose) if pose else None
        return self._read[agent]

    def __iter__(self) -> Iterator[str]:
        return iter(self._poses)

    def __len__(self) -> int:
        return len(self._poses)

    def nearest(self, cell: Cell, count: int) -> tuple[str, ...]:
        """The `count` teammates nearest `cell` (cells apart) whose poses are known, in team order; of
        those as far, the first in team order."""
        if (cell, count) not in self._nearest:
            self._nearest[cell, count] = self._find_nearest(cell, count)
        return self._nearest[cell, count]

    def _find_nearest(self, cell: Cell, count: int) -> tuple[str, ...]:
        x0, y0, z0 = cell
        apart = (
            (abs(x - x0) + abs(y - y0) + abs(z - z0), order, agent)
            for order, (agent, pose) in enumerate(self._poses.items())
            if pose
            for x, y, z in [pose["position"]]
        )
        return tuple(agent for _, _, agent in sorted(heapq.nsmallest(count, apart), key=lambda near: near[1]))


@dataclass(frozen=True)
class MapNews:
    """What the team's map gained since a reader last read it: free cells and walls, each once, in the order the
    team first saw them; `read` is where its next read starts."""

    cells: tuple[Cell, ...]
    walls: tuple[Wall, ...]
    read: tuple[int, int]  # (cells, walls) the team's map held at this read


class TeamMap(Protocol):
    """The map the team shares through its store: every cell and wall any member's committed steps saw."""

    def map_news(self, since: tuple[int, int]) -> MapNews:
        """The cells and walls the team's map gained after the first `since` (cells, walls) it held."""


@dataclass(frozen=True)
class Teammates:
    """What the agent knows of its teammates this step: what they wrote to it, and where they are; and the
    map their committed steps made, for a policy that shares one (the classical explorers)."""

    messages: tuple[HeardMessage, ...]  # in the order read
    positions: TeammatePoses  # the others'
    team_map: TeamMap | None = None


@dataclass(frozen=True)
class DecisionContext:
    """Everything an explorer's decision rests on; the prompt and the built-in policies both read it."""

    team: TeamContext
    setup: AgentSetup
    view: View
    teammates: Teammates
    memories: tuple[tuple[str, float], ...]  # (text, distance) of the memories retrieved, nearest first
    recent_actions: tuple[ActionTaken, ...]  # the last RECENT_ACTIONS, oldest first
    available_actions: tuple[str, ...]


@dataclass(frozen=True)
class CoordinatorContext:
    """What a coordinator's directives rest on: the team, and the explorers' reports since its last tick."""

    team: TeamContext
    reports: tuple[SightReport, ...]  # in arrival order
    available_actions: tuple[str, ...]  # what an explorer can be told to do
    messages: tuple[HeardMessage, ...] = ()  # its mail: the system agent's word, messages passed to it
    positions: Mapping[str, PoseDict | None] = field(default_factory=dict)  # the explorers', as the store has them


# ---- the prompt ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """What a decision prompt asks the agent to choose, in the parts the prompt places by how often they
    change: `rules` and `reply` (how to answer) are the same all run, `choices` (the goals) change each step."""

    rules: str
    reply: str
    choices: str = ""


def render_prompt(context: DecisionContext, choice: Choice | None = None) -> str:
    """The decision prompt: what is the same for the whole team first, then who the agent is, then the step;
    `choice` is what it asks for, each step's action under a JSON schema by default."""
    choice = choice or action_choice(context, JSON)
    team, setup, view = context.team, context.setup, context.view
    return render(
        "decision",
        team_size=len(team.members),
        world=team.world,
        team_goal=team_goal(team),
        pose_note=_pose_note(context),
        rules=choice.rules,
        reply=choice.reply,
        agent_id=team.agent_id,
        role=setup.role,
        persona=setup.persona.strip(),
        max_steps=team.max_steps,
        step=team.step,
        pose=view.pose.describe(),
        visible=_clip(view.caption, CAPTION_CHARS),
        rooms=_rooms_text(view.rooms, view.rooms_entered),
        memories=_lines(
            [f"{_clip(one_line(text), MEMORY_CHARS)} (distance {d:.2f})" for text, d in context.memories],
            "Nothing yet.",
        ),
        messages=_messages_text(context.teammates.messages),
        team_objects=team_objects(team),
        other_agents=_teammates_text(view.pose, context.teammates.positions),
        recent_actions=_lines(
            [f"step {a['step']}: {a['action']} -> {a['outcome']}: {a['detail']}" for a in context.recent_actions],
            "None yet: this is your first step.",
        ),
        choices=choice.choices,
    )


def action_choice(context: DecisionContext, syntax: str) -> Choice:
    """A step's action, from the available actions, its reply asked in `syntax` (JSON or YAML)."""
    return Choice(
        rules=available_actions(context),
        reply=reply_text(syntax, comm_note(context), render("reply_actions", message_fields=message_fields(context))),
    )


def available_actions(context: DecisionContext) -> str:
    listed = "\n".join(f"- {a}: {ACTION_HELP.get(a, '')}" for a in context.available_actions)
    return render("available_actions", actions=listed)


def reply_text(syntax: str, note: str, fields: str) -> str:
    """How to reply: the note on messages, then the reply's fields, described in words (no example values a
    model could give back), in `syntax`."""
    return render("reply_fields", comm_note=note, how=how_to_reply(syntax), fields=fields.strip()).strip()


def message_fields(context: DecisionContext) -> str:
    """The reply's message fields, where the agent may message its team; else none."""
    return render("reply_message") if context.setup.comm_enabled else ""


def comm_note(context: DecisionContext, goals: bool = False) -> str:
    """What the prompt says of messages: off, or what to write; under goals, that the planner tells the team."""
    if not context.setup.comm_enabled:
        return render("comm_off").strip()
    if goals:
        return render("comm_goals").strip()
    search = "\n" + render("comm_search").strip() if context.team.targets else ""
    return render("comm_on").strip() + search


def _messages_text(messages: Sequence[HeardMessage]) -> str:
    shown = [said_by(m["sender"], m["message"], MESSAGE_CHARS) for m in messages[-PROMPT_MESSAGES:]]
    hidden = len(messages) - len(shown)
    text = _lines(shown, "No messages from other agents")
    return f"{text}\n({hidden} older messages this step not shown)" if hidden else text


def said_by(sender: str, text: str, limit: int) -> str:
    """`Agent2: "text"`: what a teammate wrote as one quoted item of a prompt, at most `limit` characters
    inside its quotes. Its white space (new lines among it) is one space and its other unprintable characters
    '?', and a double quote inside it becomes a single one, so that no message can open a line or a section
    of the prompt, close its own quote, or seem to come from another agent."""
    flat = "".join(c if c.isprintable() else "?" for c in " ".join(text.split())).replace('"', "'")
    return f'{sender}: "{_clip(flat, limit)}"'


def one_line(text: str) -> str:
    """`text` with its white space, new lines among it, as one space: a line of the prompt stays one."""
    return " ".join(text.split())


def team_goal(team: TeamContext) -> str:
    """What the team is after, the same all run: a search task's targets, or every object."""
    if not team.targets:
        return render("goal_explore", max_steps=team.max_steps).strip()
    return render("goal_search", targets=", ".join(map(spoken, team.targets)), max_steps=team.max_steps).strip()


def team_objects(team: TeamContext) -> str:
    """The team's latest finds, and a search task's targets still to find."""
    return _latest(_found_text(team.discoveries), PROMPT_TEAM_OBJECTS) + still_to_find(team)


def still_to_find(team: TeamContext) -> str:
    """A search task's targets the team has still to find, on a line of its own; "" without a task."""
    if not team.targets:
        return ""
    missing = missing_targets(team.targets, team.discoveries)
    return "\n" + render("still_to_find", missing=", ".join(map(spoken, missing)) or "nothing").strip()


def _rooms_text(sight: RoomSight | None, entered: Sequence[str] = ()) -> str:
    """The room the agent is in, the rooms it sees into and the doors it sees (with whether it has been
    through them), a line each after what it sees; nothing without rooms."""
    if sight is None:
        return ""
    lines = [f"You are in {room_called(sight.room)}."] if sight.room else []
    into = [room for room in sight.in_sight if not sight.doorway or room not in sight.doorway]
    if into:
        lines.append(f"You see into {', '.join(map(room_called, into))}.")
    if sight.doorway:
        named = [room_called(side) for side in sight.doorway if side]  # one at least: a door's sides differ
        where = f"between {named[0]} and {named[1]}" if len(named) == 2 else f"of {named[0]}"
        lines.append(f"You stand in the doorway {where}.")
    for door in sight.doors:
        where = f"to {room_called(door.leads_to)}" if door.leads_to else "out of this room"
        if door.leads_to and door.leads_to.name not in entered:
            where += ", not yet entered"
        lines.append(f"A door to the {door.direction}, at ({door.cell[0]}, {door.cell[1]}), leads {where}.")
    return "".join(f"\n{line}" for line in lines)


def room_called(room: Room) -> str:
    """'the kitchen' for a room named by its kind, its name otherwise: 'bedroom 2', 'Room A (bathroom)'."""
    name = _clip(room.name, ROOM_NAME_CHARS)
    if room.name == room.kind:
        return f"the {name}"
    return name if room.kind in room.name else f"{name} ({_clip(room.kind, ROOM_NAME_CHARS)})"


def _teammates_text(pose: Pose, others: TeammatePoses) -> str:
    """Where the nearest teammates are, in team order; how many others there are."""
    shown = others.nearest(pose.cell, PROMPT_TEAMMATES)
    text = _lines([f"{a}: {known.describe()}" for a in shown if (known := others[a])], "You are alone.")
    hidden = len(others) - len(shown)
    return f"{text}\n({hidden} more teammates farther away)" if hidden else text


def _found_text(discoveries: Mapping[str, Discovery]) -> list[str]:
    cells = {name: found["cell"] for name, found in discoveries.items() if found.get("cell")}
    return [objects_text([name], cells) for name in discoveries]


def _latest(names: list[str], limit: int) -> str:
    if not names:
        return "Nothing yet."
    shown = ", ".join(names[-limit:])
    return f"{shown} (and {len(names) - limit} found earlier)" if len(names) > limit else shown


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pose_note(context: DecisionContext) -> str:
    if context.view.dead_reckoned:
        return render("pose_dead_reckoned").strip()
    size, view_distance = context.team.size, context.team.view_distance
    return render(
        "pose_grid",
        size="x".join(map(str, size)) if size else "of unknown size",
        view_distance=view_distance or "a few",
    ).strip()


def _lines(items: list[str], empty: str) -> str:
    return "\n".join(f"- {item}" for item in items) if items else empty
