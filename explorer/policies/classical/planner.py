"""A classical explorer as a decision policy: the team's map (team_grid.py), its frontier (frontiers.py), the
goal its planner assigns this robot, and the grid's own moves to it.

Every robot plans the team's assignment from the same map and the same poses, so each takes its own part
of one plan, as a central planner would hand it out; the map reaches it through the team's store, not through
messages, and it sends none. It walks as a robot with its sensor ahead does: it turns to face the next cell of
a shortest way over the ground the team knows free, then moves forward; at its goal it turns (or tilts) to face
the unseen cell beside it. Under a search task, a target the team has found is walked to by its finder.

A retried call for the same step gives the same answer: the map grows only by marking, and each step's
decision is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from explorer.policies import grid_arrays
from explorer.policies.classical.frontiers import TeamProblem, team_problem
from explorer.policies.classical.team_grid import TeamGrid
from nodes.decision_context import Cell, DecisionContext
from nodes.interfaces import Decision, DecisionOutcome
from perception.actions import safe_action
from perception.base import FACING_VECTORS, Pose, turn
from perception.targets import target_of

Assignment = Callable[[TeamProblem, str], int | None]  # (the team's problem, this robot) -> its goal's index
REACHED = 1  # a found target counts as reached within this many moves of its cell


@dataclass(frozen=True)
class Planner:
    """One classical explorer: its name, its rule, whether the rule needs every robot's costs (else its own)."""

    name: str
    assign: Assignment
    team_wide: bool
    rule: str  # the decision's reason, after the goal


class FrontierExplorer:
    """A DecisionPolicy that explores by a classical planner's rule."""

    reads_memories = False  # it decides from the team's map

    def __init__(self, planner: Planner) -> None:
        self.planner = planner
        self.name = planner.name
        self.grid = TeamGrid()
        self.reached: set[str] = set()  # the found targets it has walked to
        self.spent: set[Cell] = set()  # goals it stood at that no turn would show more of: not goals again
        self._decided: tuple[int, Decision] | None = None

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        if self._decided is None or self._decided[0] != context.team.step:
            self._decided = (context.team.step, self._choose(context))
        return DecisionOutcome(self._decided[1])

    def _choose(self, context: DecisionContext) -> Decision:
        available = context.available_actions
        if not context.team.size:
            return Decision(safe_action(available), reason="I do not know the world's extent.")
        self.grid.learn(context)
        pose = context.view.pose
        found = self._found_target(context)
        if found is not None:
            name, cell = found
            return self._walk(context, pose, cell, f"walking to the {name} the team found at {cell}")
        problem, index = self._assigned(context)
        if index is not None and pose.cell == problem.goals[index].cell and self._look_beside(pose) is None:
            self.spent.add(pose.cell)  # it stands at its goal, and nothing there is left to see
            problem, index = self._assigned(context)
        if index is None:
            return Decision(safe_action(available), reason="No frontier is left within reach.")
        goal = problem.goals[index]
        moves = problem.costs[problem.robots.index(context.team.agent_id), index]
        why = f"frontier at {goal.cell}, {moves:.0f} moves away: {self.planner.rule}"
        return self._walk(context, pose, goal.cell, why)

    def _assigned(self, context: DecisionContext) -> tuple[TeamProblem, int | None]:
        """The team's problem, and the index of the goal the planner gives this robot (None: no goal)."""
        problem = self._problem(context)
        return problem, self.planner.assign(problem, context.team.agent_id)

    def _problem(self, context: DecisionContext) -> TeamProblem:
        """The team's robots (or this one alone) at their cells, and the frontier's goals."""
        me = context.team.agent_id
        cells: dict[str, Cell] = {me: context.view.pose.cell}
        if self.planner.team_wide:
            positions = context.teammates.positions
            for robot in context.team.members:
                where = positions.get(robot) if robot != me else None
                if where is not None:
                    cells[robot] = where.cell
        robots = [robot for robot in context.team.members if robot in cells]
        return team_problem(self.grid, robots, cells, context.team.view_distance or 1, frozenset(self.spent))

    def _found_target(self, context: DecisionContext) -> tuple[str, Cell] | None:
        """A target the team found, this agent found and has not yet walked to: its name and cell."""
        team = context.team
        for name, found in team.discoveries.items():
            target = target_of(name, team.targets)
            cell = found.get("cell")
            if target and cell and found.get("finder") == team.agent_id and name not in self.reached:
                at = (cell[0], cell[1], cell[2])
                if _moves_apart(context.view.pose.cell, at) <= REACHED:
                    self.reached.add(name)
                    continue
                return name, at
        return None

    def _walk(self, context: DecisionContext, pose: Pose, goal: Cell, why: str) -> Decision:
        """The next action of the walk to `goal`, and at the goal the look at what is unseen beside it."""
        available = context.available_actions
        if pose.cell == goal:
            action = self._look_beside(pose)
        else:
            distances = grid_arrays.known_path_distances(self.grid.passable(), [goal])[0]
            action = _step_towards(pose, distances, self.grid.seen.shape)
        if action is None or action not in available:
            action = safe_action(available)
        return Decision(action, reason=why)

    def _look_beside(self, pose: Pose) -> str | None:
        """The turn or tilt that brings an unseen cell beside the pose into its view; None if none would."""
        unknown = self.grid.unknown()
        x, y, z = pose.cell
        width, depth, height = unknown.shape
        ways = [
            facing
            for facing, (dx, dy) in FACING_VECTORS.items()
            if 0 <= x + dx < width and 0 <= y + dy < depth and unknown[x + dx, y + dy, z]
        ]
        if ways and pose.facing not in ways:
            return _turn_to(pose.facing, ways[0])
        if ways and pose.pitch != 0:
            return _level(pose.pitch)
        for dz, tilt in ((1, "look_up"), (-1, "look_down")):
            if 0 <= z + dz < height and unknown[x, y, z + dz] and pose.pitch != dz:
                return tilt
        return None


def _step_towards(pose: Pose, distances: np.ndarray, size: tuple[int, ...]) -> str | None:
    """The first action along a shortest way down `distances` from the pose: level the view, turn to face the
    next cell and go forward, or climb."""
    x, y, z = pose.cell
    here = distances[x, y, z]
    if not np.isfinite(here):
        return None
    ahead = FACING_VECTORS[pose.facing]
    options = [(ahead, None), *((vector, facing) for facing, vector in FACING_VECTORS.items() if vector != ahead)]
    for (dx, dy), facing in options:
        nx, ny = x + dx, y + dy
        if 0 <= nx < size[0] and 0 <= ny < size[1] and distances[nx, ny, z] < here:
            if pose.pitch != 0:
                return _level(pose.pitch)
            return "forward" if facing is None else _turn_to(pose.facing, facing)
    for dz, climb in ((1, "move_up"), (-1, "move_down")):
        if 0 <= z + dz < size[2] and distances[x, y, z + dz] < here:
            return climb
    return None


def _level(pitch: int) -> str:
    """The tilt that levels the view."""
    return "look_down" if pitch > 0 else "look_up"


def _turn_to(facing: str, wanted: str) -> str:
    """look_left or look_right: the quarter turn towards `wanted` (right, for the way behind)."""
    return "look_left" if turn(facing, -1) == wanted else "look_right"


def _moves_apart(a: Cell, b: Cell) -> int:
    return sum(abs(p - q) for p, q in zip(a, b))


def nearest_goal(problem: TeamProblem, robot: str, among: Mapping[int, bool] | None = None) -> int | None:
    """The robot's cheapest goal (the first of those as cheap), among those `among` allows; None if none."""
    row = problem.costs[problem.robots.index(robot)]
    allowed = [i for i in range(len(problem.goals)) if np.isfinite(row[i]) and (among is None or among.get(i))]
    return min(allowed, key=lambda i: (row[i], i)) if allowed else None
