"""The built-in explorer: the default decision policy, needing no model and no network.

It reads the same context the prompt is made from (and not the prompt). It
keeps a map of what it has seen (explorer/policies/grid_map.py) and walks to
the goal pose worth the most unseen cells for the steps it takes to get
there, keeping its goal until another is clearly better.

As a teammate it leaves alone the ground near teammates and what they stand
looking at (their poses are in the team's store) and, when messages are on,
what they say: the goal a teammate is heading for, the ground it reports as
covered and the walls it met. In a team of more than NEIGHBOURS + 1, only its
NEIGHBOURS nearest teammates count. Where a teammate's view or goal overlaps its own
goal, the one later in the team's order gives way, so that two teammates never
both turn from each other. It says the same in its own messages, only what
changes a teammate's plan: a new goal, with the ground covered and the walls
met since it last spoke (each wall once), or walls on their own once many are
unsaid. What it finds the team's store already tells.

A retried call for the same step gives the same answer: the map grows only by
set unions on what the context says, and each step's decision is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet

import explorer.policies.sentences as sentences
from explorer.policies import grid_arrays
from explorer.policies.grid_arrays import CellMask
from explorer.policies.grid_map import (
    KEEP_SHARE,
    Claim,
    Goal,
    GridMap,
    PoseKey,
    cell_distance,
    pose_key,
)
from explorer.policies.semantic_prior import SemanticPrior
from explorer.policies.sentences import Box
from nodes.decision_context import Cell, DecisionContext, Wall
from nodes.interfaces import Decision, DecisionOutcome
from perception.actions import safe_action
from perception.base import FACINGS
from perception.geometry import step_offset

MOVE_ACTIONS = ("forward", "backward", "move_left", "move_right", "move_up", "move_down")
ANNOUNCE_DISTANCE = 3  # a new goal this far (in cells) from the announced one is news
# Walls met are said with a new goal, or on their own once this many are unsaid: a teammate that
# does not know them takes a maze it has not walked for open ground worth the walk, and plans
# through hedges; but one message per wall met would be most of the team's talk.
WALL_NEWS = 12
# The teammates it reckons with: every one in a team of up to NEIGHBOURS + 1, else the NEIGHBOURS nearest.
# A teammate farther off is left to its own nearer teammates, so that an agent's step costs the same in a
# team of a thousand as in one of eight. A teammate beyond its nearest 16 seldom borders its share of
# the ground: teams of 32 and 64 see as much, on average, as when they reckon with all (bench/neighbours.py).
NEIGHBOURS = 16


class OfflineExplorer:
    name = "offline"
    reads_memories = False  # it decides from its map

    def __init__(self, prior: SemanticPrior | None = None) -> None:
        self.map = GridMap()
        self.prior = prior  # under a search task: how the rooms it knows go with the targets left
        self.map.ground_weights = prior.weights if prior else None
        self.goal: PoseKey | None = None  # the pose it is walking to
        self.claims: dict[str, Claim] = {}  # teammate -> the pose it said it is heading for
        self.announced: PoseKey | None = None  # the goal last announced
        self.unreported: set[Cell] = set()  # cells seen since the last coverage report
        self.unreported_walls: set[Wall] = set()  # walls (x, y) seen and not said yet
        self.team_walls: set[Wall] = set()  # walls (x, y) said, by a teammate or by itself: not worth saying again
        self._decided: tuple[int, Decision] | None = None

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        return DecisionOutcome(self.choose(context))

    def choose(self, context: DecisionContext) -> Decision:
        if self._decided and self._decided[0] == context.team.step:
            return self._decided[1]  # a retried call
        decision = self._choose(context)
        self._decided = (context.team.step, decision)
        return decision

    def _choose(self, context: DecisionContext) -> Decision:
        available = context.available_actions
        if not context.team.size:
            return Decision(safe_action(available), "I do not know the world's extent.", "scan around")
        pose = self.observe(context)
        goal = self._next_goal(context, pose)
        if goal is None:
            self.goal = None
            return Decision(
                safe_action(available),
                "Everything within reach has been seen.",
                "keep scanning",
                self.news(context, None),
            )
        self.goal = goal.pose
        x, y, z, facing, _ = goal.pose
        where = "one step away" if goal.steps == 1 else f"{goal.steps} steps away"
        return Decision(
            goal.first_action,
            f"Looking from ({x}, {y}, {z}) facing {facing}, {where}, shows {goal.new_cells} cells I have not seen.",
            "walk to the goal that shows the most unseen ground for its distance",
            self.news(context, goal.pose),
        )

    def observe(self, context: DecisionContext) -> PoseKey:
        """Learn what the step's context shows (safe to repeat); returns the agent's pose as a map key.

        On a clock with delays the view may be older than the agent's last actions:
        the pose returned is then where those actions take it, by the map.
        """
        pose = self.map.learn(context)
        view = context.view
        self.unreported.update(view.seen_cells)
        self.unreported_walls.update(wall for wall in view.seen_walls if wall not in self.team_walls)
        if not view.actions_unseen:  # a late action's outcome says nothing of where the view is from
            self._learn_blocked(context)
        self._read_messages(context)
        if self.prior:
            self.prior.learn(context)
        if view.actions_unseen:
            return self.map.predict(pose, view.actions_unseen)
        return pose

    def ranked_goals(
        self,
        context: DecisionContext,
        pose: PoseKey,
        limit: int = 1,
        keep: PoseKey | None = None,
    ) -> tuple[list[Goal], Goal | None]:
        """(the best goals, best first; the goal `keep` as it stands now, or None)."""
        neighbours = self._neighbours(context)
        given_way_to = self._given_way_to(context, neighbours)
        # what they look at, where they stand and head
        claimed = grid_arrays.union_of(self.map.extent, [cells for sights in given_way_to.values() for cells in sights])
        theirs = self._teammates_region(context, pose, neighbours, given_way_to)
        return self.map.goals(pose, context.available_actions, claimed, theirs, limit, keep)

    def _neighbours(self, context: DecisionContext) -> AbstractSet[str]:
        """The teammates it reckons with (NEIGHBOURS): all of them in a small team."""
        team, positions = context.team, context.teammates.positions
        if len(team.members) <= NEIGHBOURS + 1:
            return positions.keys() | (set(team.members) - {team.agent_id})
        return set(positions.nearest(context.view.pose.cell, NEIGHBOURS))

    def _teammates_region(
        self, context: DecisionContext, pose: PoseKey, neighbours: AbstractSet[str], given_way_to: Iterable[str]
    ) -> CellMask | None:
        """Cells nearer (by path) a teammate, or where a teammate I give way to said it is going, than to me."""
        positions = context.teammates.positions
        sources = [where.cell for teammate in neighbours if (where := positions.get(teammate))]
        sources += [self.claims[teammate][:3] for teammate in given_way_to if teammate in self.claims]
        return self.map.nearer_others(pose[:3], sources) if sources else None

    def _next_goal(self, context: DecisionContext, pose: PoseKey) -> Goal | None:
        goals, kept = self.ranked_goals(context, pose, keep=self.goal)
        best = goals[0] if goals else None
        if kept and best and kept.utility >= KEEP_SHARE * best.utility:
            return kept
        return best

    def _learn_blocked(self, context: DecisionContext) -> None:
        """A move that was blocked found a wall (or an edge) where the map showed none."""
        last = context.recent_actions[-1] if context.recent_actions else None
        if last and last["outcome"] == "blocked" and last["action"] in MOVE_ACTIONS:
            pose = context.view.pose
            dx, dy, dz = step_offset(pose, last["action"])
            x, y = pose.x + dx, pose.y + dy
            if dz == 0 and self.map.in_grid(x, y) and (x, y, pose.z) not in self.map.seen:  # seen cells are free
                self.map.add_wall((x, y))

    def _read_messages(self, context: DecisionContext) -> None:
        """What the messages say, but for those of teammates beyond its neighbours (_neighbours)."""
        height, members = self.map.extent[2], context.team.members
        far = set(members) - self._neighbours(context) - {context.team.agent_id}
        for message in context.teammates.messages:
            text, sender = message["message"], message["sender"]
            if sender in far:
                continue
            # Walls first: what a claim shows is reckoned with them.
            for box in sentences.read_walls(text):
                for wall in self._columns(box):
                    if wall not in self.map.open:  # what it saw open stays open
                        self.map.add_wall(wall)
                        self.team_walls.add(wall)
            target = sentences.read_heading(text)
            if target and sender in context.team.members:
                x, y, z, facing = target
                if self.map.in_grid(x, y) and 0 <= z < height:
                    claim = (x, y, z, facing, 0)
                    self.claims[sender] = claim
            for x0, x1, y0, y1, level in sentences.read_covered(text):
                self.map.learn_teammates_ground((x0, x1, y0, y1), level)

    def _columns(self, box: Box) -> list[Wall]:
        """The (x, y) of a box a message names (x0, x1, y0, y1), within the grid."""
        width, depth, _ = self.map.extent
        x0, x1, y0, y1 = box
        return [
            (x, y) for x in range(max(x0, 0), min(x1, width - 1) + 1) for y in range(max(y0, 0), min(y1, depth - 1) + 1)
        ]

    def _given_way_to(
        self, context: DecisionContext, neighbours: AbstractSet[str]
    ) -> dict[str, tuple[frozenset[Cell], ...]]:
        """The `neighbours` whose ground I leave to them, with what they see (_teammate_sights). A teammate
        after me in the team's order gives way to me where what it looks at or heads for overlaps my goal
        (it reads my claim and sees where I stand too), so that two teammates on one pose do not each
        turn from the other, for ever."""
        team, agent_id = context.team.members, context.team.agent_id
        mine = self.map.sight(self.goal) if self.goal else frozenset()
        before_me = team.index(agent_id)  # found once, not once a teammate: O(team) a step, not O(team²)
        return {
            teammate: sights
            for index, teammate in enumerate(team)
            if teammate in neighbours
            for sights in [self._teammate_sights(context, teammate)]
            if index < before_me or all(cells.isdisjoint(mine) for cells in sights)
        }

    def _teammate_sights(self, context: DecisionContext, teammate: str) -> tuple[frozenset[Cell], ...]:
        """What a teammate sees where it stands, and will see where it said it is going (every way, if it
        did not say which): the team's shared sets (grid_map.team_sight), not a union of copies of them."""
        where = context.teammates.positions.get(teammate)
        sights = (self.map.sight(pose_key(where), kept=False),) if where else ()
        claim = self.claims.get(teammate)
        if not claim:
            return sights
        x, y, z, facing, pitch = claim
        return (*sights, *(self.map.sight((x, y, z, f, pitch), kept=False) for f in ([facing] if facing else FACINGS)))

    def news(self, context: DecisionContext, goal: PoseKey | None) -> str:
        """The step's news, or "": a new goal with the ground covered and the walls met, or many walls met."""
        if not context.setup.comm_enabled:
            return ""
        parts = []
        announcing = goal is not None and (
            self.announced is None or cell_distance(goal, self.announced) >= ANNOUNCE_DISTANCE
        )
        if announcing:
            said, cells = sentences.covered(self.unreported)
            if said:
                parts.append(said)
                self.unreported -= cells
        walls = self.unreported_walls - self.team_walls
        if walls and (announcing or len(walls) >= WALL_NEWS):
            said, said_walls = sentences.walls(walls)
            parts.append(said)
            self.unreported_walls -= said_walls
            self.team_walls |= said_walls
        if announcing and goal is not None:
            parts.append(sentences.heading(goal))
            self.announced = goal
        return " ".join(parts)
