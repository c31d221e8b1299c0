"""Goal-level decisions for a language model (`--decide goals`): the model picks a goal, a planner walks there.

The prompt lists up to MAX_GOALS goals: for a model, the frontier's pieces on the team's shared map, nearest
first, the candidates the classical explorers choose among (explorer/policies/frontier_goals.py); for the
built-in explorer as a teacher, its own ranking (explorer/policies/offline.py). The built-in explorer keeps
the agent's map and plans the way. The model is asked again only when there is something to
decide: the goal is reached or cannot be reached, a teammate wrote to this
agent or said it is heading for the same ground, or REASK_STEPS steps have
passed. An object coming into sight is not such a thing: the team's store
has it at once, and the goals already weigh the ground still unseen. The
steps between are the planner's: no prompt, no model call, traced with the
policy "planner".

Where the world has rooms, each goal says which room it leads into, as far as the agent knows the rooms
(explorer/policies/known_rooms.py): "enter the kitchen through the door at (5, 3, 0)", so that what a
model knows of where things are reaches the world through the goal it picks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import replace

import explorer.policies.sentences as sentences
from explorer.model.schemas import goal_schema
from explorer.policies.frontier_goals import FrontierGoals
from explorer.policies.grid_map import Goal, Place, PoseKey, cell_distance
from explorer.policies.known_rooms import KnownRooms
from explorer.policies.model_policy import Ask, ModelPolicy, Syntax, action_choices
from explorer.policies.offline import OfflineExplorer
from explorer.policies.replies import parse_goal_decision
from nodes.decision_context import (
    Choice,
    DecisionContext,
    available_actions,
    comm_note,
    render_prompt,
    reply_text,
    room_called,
)
from nodes.interfaces import PLANNER, Decision, DecisionOutcome
from perception.actions import safe_action
from perception.rooms import Room
from prompts import JSON, YAML, render

MAX_GOALS = 6
REASK_STEPS = 10
AROUND = 3  # cells and steps: at its goal the agent looks around this close before asking again
NEAR = 5  # cells (by the grid, not the path): a teammate this close to a goal is "near" it
COMPASS = {
    (0, 1): "north",
    (1, 1): "north-east",
    (1, 0): "east",
    (1, -1): "south-east",
    (0, -1): "south",
    (-1, -1): "south-west",
    (-1, 0): "west",
    (-1, 1): "north-west",
}


class GoalLoop(ABC):
    """The goal-level loop: a goal chosen from the ranked list when there is something to decide, the planner
    walking there between. Who chooses is `choose_goal`'s: a model (GoalPolicy), or the explorer itself
    (explorer/policies/explorer_goals.py)."""

    reads_memories = True  # its prompt shows them

    def __init__(self, name: str, explorer: OfflineExplorer | None = None) -> None:
        self.name = name
        self.explorer = explorer or OfflineExplorer()  # the map, the goal ranking, the planner and the team's sentences
        self.rooms = KnownRooms()  # to say which room each goal leads into
        self.goal: PoseKey | None = None  # the pose the model chose
        self.asked_at = 0  # the step the model was last asked (it is, before a goal is first chosen)
        self._decided: tuple[int, DecisionOutcome] | None = None

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        if self._decided and self._decided[0] == context.team.step:
            return self._decided[1]  # a retried call: the model is not asked twice
        self.rooms.learn(context)
        outcome = self._decide(context)
        self._decided = (context.team.step, outcome)
        return outcome

    def _decide(self, context: DecisionContext) -> DecisionOutcome:
        pose = self.explorer.observe(context)
        goals, current = self.explorer.ranked_goals(context, pose, MAX_GOALS, keep=self.goal)
        reached = pose == self.goal
        if reached:
            self.goal = self._look_around(goals, pose)
            current = next((g for g in goals if g.pose == self.goal), None)
        why = self._reason_to_ask(context, pose, current, reached)
        if not why:  # the goal stands, and is among the goals, so on a known way: the planner walks on
            assert self.goal is not None
            action = self.explorer.map.path_to(pose, self.goal, context.available_actions)
            assert action is not None
            x, y, z, facing, _ = self.goal
            decision = Decision(
                action,
                reason=f"walking to my goal: ({x}, {y}, {z}) facing {facing}",
                message_to_others=self.explorer.news(context, None),
            )
            return DecisionOutcome(decision, decided_by=PLANNER, prompt="")
        if not goals:
            self.goal = None
            decision = Decision(
                safe_action(context.available_actions),
                reason="no unseen ground left in reach",
                message_to_others=self.explorer.news(context, None),
            )
            return DecisionOutcome(decision, decided_by=PLANNER, prompt="")
        self.asked_at = context.team.step
        choice = goal_choice(context, self.reply_syntax(), self._goal_lines(context, pose, goals))
        outcome, number = self.choose_goal(render_prompt(context, choice), context, goals, current)
        if outcome.decision is None or number is None:  # no usable reply, or an action: asked again next step
            self.goal = None
            return outcome
        self.goal = goals[number - 1].pose
        news = self.explorer.news(context, self.goal)
        message = " ".join(part for part in (outcome.decision.message_to_others, news) if part)
        decision = replace(
            outcome.decision,
            action=goals[number - 1].first_action,
            message_to_others=message,
            reason=outcome.decision.reason or f"goal G{number}",
        )
        return replace(outcome, decision=decision, notes=outcome.notes + (f"{why}; chose G{number}",))

    def reply_syntax(self) -> str:
        """The syntax the prompt asks the reply in: JSON, as a schema would have it, unless a model is asked otherwise."""
        return JSON

    @abstractmethod
    def choose_goal(
        self, prompt: str, context: DecisionContext, goals: list[Goal], current: Goal | None
    ) -> tuple[DecisionOutcome, int | None]:
        """(outcome, the number of the goal chosen among `goals`, or None) for the goals `prompt` lists;
        `current` is the goal being walked to, as it stands now (it may be ranked below those listed), or None."""

    def _look_around(self, goals: list[Goal], here: PoseKey) -> PoseKey | None:
        """At its goal `here`, the agent looks around there on its own: the best goal within AROUND cells
        of it and a few steps away becomes the goal, without asking; None when there is none."""
        nearby = [g for g in goals if cell_distance(g.pose, here) <= AROUND and g.steps <= AROUND]
        return nearby[0].pose if nearby else None

    def _reason_to_ask(
        self,
        context: DecisionContext,
        pose: PoseKey,
        current: Goal | None,
        reached: bool,
    ) -> str:
        """Why the model must be asked this step ("" when the planner walks on)."""
        if self.goal is None:
            return "goal reached, and looked around there" if reached else "no goal"
        reasons = []
        if current is None:  # the goal is no longer among the goals: why not?
            unreachable = self.explorer.map.path_to(pose, self.goal, context.available_actions) is None
            reasons.append(
                "goal unreachable" if unreachable else "goal no longer worth the way: little left to see there"
            )
        messages = context.teammates.messages
        reasons += [f"{m['sender']} wrote to me" for m in messages if m.get("recipient") == context.team.agent_id]
        # A heading said this step, not one already known: that would wake the model every step.
        headings = [(m["sender"], sentences.read_heading(m["message"])) for m in messages]
        reasons += [
            f"{sender} is heading for my goal"
            for sender, heading in headings
            if heading and _near(heading, self.goal) and self._yields_to(context, sender, pose)
        ]
        if context.team.step - self.asked_at >= REASK_STEPS:
            reasons.append(f"{REASK_STEPS} steps since I was last asked")
        return "; ".join(reasons)

    def _yields_to(self, context: DecisionContext, teammate: str, pose: PoseKey) -> bool:
        """Whether this agent gives its goal up to `teammate`, which heads for it too: the one nearer the
        goal keeps it (the first by name, as near), so that only one of the two is asked again."""
        assert self.goal is not None
        there = context.teammates.positions.get(teammate)
        if there is None:
            return True
        theirs, mine = cell_distance(there.cell, self.goal), cell_distance(pose, self.goal)
        return (theirs, teammate) < (mine, context.team.agent_id)

    def _goal_lines(self, context: DecisionContext, pose: PoseKey, goals: list[Goal]) -> str:
        teammates = {a: p.cell for a, p in context.teammates.positions.items() if p}
        lines = []
        for number, goal in enumerate(goals, 1):
            x, y, z, facing, pitch = goal.pose
            near = [a for a, cell in teammates.items() if _near(cell, goal.pose)]
            near += [a for a, claim in self.explorer.claims.items() if _near(claim, goal.pose) and a not in near]
            look = {1: ", looking up", -1: ", looking down"}.get(pitch, "")
            lines.append(
                f"- G{number}: {self._into(context, goal)}look {facing}{look} from ({x}, {y}, {z}), "
                f"{_direction(pose, goal.pose)}, "
                f"{goal.steps} steps away: about {goal.new_cells} unseen cells; "
                + (f"{', '.join(near)} near" if near else "no teammate near")
            )
        return "\n".join(lines)

    def _into(self, context: DecisionContext, goal: Goal) -> str:
        """The room the goal leads into, as the start of its line: "enter the kitchen through the door at
        (5, 3, 0): ", "look around the kitchen, the room you are in: "; "" where no known room is ahead."""
        room = self._room_ahead(goal)
        if room is None:
            return ""
        here = context.view.rooms.room if context.view.rooms else None
        if here is not None and room.name == here.name:
            return f"look around {room_called(room)}, the room you are in: "
        doors = self.rooms.doors_into(room)
        if not doors:
            return f"look into {room_called(room)}: "
        pose = context.view.pose
        x, y = min(doors, key=lambda door: (abs(door[0] - pose.x) + abs(door[1] - pose.y), door))
        return f"enter {room_called(room)} through the door at ({x}, {y}, {pose.z}): "

    def _room_ahead(self, goal: Goal) -> Room | None:
        """The known room the goal stands in, else the one most of the unseen cells it shows lie in."""
        standing = self.rooms.room_at(goal.pose[:2])
        if standing is not None:
            return standing
        grid = self.explorer.map
        shown = (self.rooms.room_at(cell[:2]) for cell in grid.unseen(grid.sight(goal.pose), goal.pose))
        rooms = Counter(room for room in shown if room is not None)
        return max(rooms, key=lambda room: (rooms[room], room.name)) if rooms else None


def goal_choice(context: DecisionContext, syntax: str, goal_lines: str) -> Choice:
    """A goal among `goal_lines`, its reply asked in `syntax`; in YAML, which takes no schema, an action may be
    given instead."""
    fields = render("reply_goals")
    rules = render("goal_rules", reask_steps=REASK_STEPS)
    if syntax == YAML:
        rules = available_actions(context) + rules
        fields += render("goal_or_action")
    return Choice(
        rules=rules,
        reply=reply_text(syntax, comm_note(context, goals=True), fields),
        choices="\n" + render("goal_choices", goals=goal_lines).rstrip("\n"),
    )


class GoalPolicy(GoalLoop):
    """A language model chooses the goal (`--decide goals`), among the frontier's pieces on the team's map: the
    candidates the classical explorers see (explorer/policies/frontier_goals.py)."""

    def __init__(self, name: str, ask: Ask, constrained: bool = False, syntax: Syntax | None = None) -> None:
        super().__init__(name, FrontierGoals())
        self.model = ModelPolicy(name, ask, constrained, syntax)

    def reply_syntax(self) -> str:
        return self.model.syntax()

    def choose_goal(
        self, prompt: str, context: DecisionContext, goals: list[Goal], current: Goal | None
    ) -> tuple[DecisionOutcome, int | None]:
        ids = [f"G{n}" for n in range(1, len(goals) + 1)]
        choices = f"a `goal` that is one of {', '.join(ids)}, or " + action_choices(context.available_actions)
        return self.model.ask_for(
            prompt,
            lambda text: parse_goal_decision(text, context.available_actions, len(goals)),
            choices,
            context,
            goal_schema(ids),
        )


def _direction(start: PoseKey, end: PoseKey) -> str:
    dx, dy, dz = (e - s for s, e in zip(start[:3], end[:3]))
    where = COMPASS.get((_sign(dx), _sign(dy)), "here")
    if dz:
        where += f", {abs(dz)} level{'s' if abs(dz) > 1 else ''} {'up' if dz > 0 else 'down'}"
    return where


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _near(a: Place, b: Place) -> bool:
    return cell_distance(a, b) < NEAR
