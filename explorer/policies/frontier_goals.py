"""The goals a language model chooses among under `--decide goals`: the frontier's pieces on the team's shared
map, nearest first, as the classical explorers see them (explorer/policies/classical/frontiers.py).

The goal-level loop (goals.py) keeps the built-in explorer's map, sentences and walk: this explorer offers
the frontier's goals in place of its own ranking, so that a model and the classical planners choose among
the same candidates. A goal is a pose: the piece's cell, facing an unseen cell beside it.
"""

from __future__ import annotations

import numpy as np

from explorer.policies import grid_arrays
from explorer.policies.classical.frontiers import FrontierGoal, frontier_goals
from explorer.policies.classical.team_grid import TeamGrid
from explorer.policies.grid_map import Goal, PoseKey, cell_distance
from explorer.policies.offline import OfflineExplorer
from explorer.policies.semantic_prior import SemanticPrior
from nodes.decision_context import DecisionContext
from perception.base import FACING_VECTORS

# A goal stands while a piece of the frontier lies this close to it (cells, by the grid): the frontier moves
# on as the agent walks towards it and sees past it, and the model chose that stretch of it, not one cell.
FOLLOW = 3


def _followed(goals: list[Goal], keep: PoseKey | None) -> Goal | None:
    """The goal `keep` as it stands now: itself, or the nearest goal within FOLLOW cells of it; None if none."""
    if keep is None:
        return None
    near = [goal for goal in goals if cell_distance(goal.pose, keep) <= FOLLOW]
    return min(near, key=lambda goal: (cell_distance(goal.pose, keep), goal.pose)) if near else None


class FrontierGoals(OfflineExplorer):
    """The built-in explorer, whose ranked goals are the frontier's pieces on the team's map, nearest first."""

    def __init__(self, prior: SemanticPrior | None = None) -> None:
        super().__init__(prior)
        self.team_grid = TeamGrid()

    def observe(self, context: DecisionContext) -> PoseKey:
        self.team_grid.learn(context)
        return super().observe(context)

    def ranked_goals(
        self, context: DecisionContext, pose: PoseKey, limit: int = 1, keep: PoseKey | None = None
    ) -> tuple[list[Goal], Goal | None]:
        """The `limit` nearest frontier goals (by moves over known free ground), and the goal `keep` as it
        stands now (_followed), or None."""
        distances = grid_arrays.known_path_distances(self.team_grid.passable(), [pose[:3]])[0]
        pieces = sorted(
            (piece for piece in frontier_goals(self.team_grid) if np.isfinite(distances[piece.cell])),
            key=lambda piece: (distances[piece.cell], piece.cell),
        )
        goals = [goal for piece in pieces if (goal := self._goal(context, pose, piece, int(distances[piece.cell])))]
        return goals[:limit], _followed(goals, keep)

    def _goal(self, context: DecisionContext, pose: PoseKey, piece: FrontierGoal, moves: int) -> Goal | None:
        """The piece as a goal: its cell, facing the unseen cell beside it; None where the walk finds no way."""
        target = self._looking_out(piece, pose)
        first = self.map.path_to(pose, target, context.available_actions) if target != pose else None
        if first is None:
            return None
        return Goal(target, float(piece.cells), piece.cells, float(moves), max(moves, 1), first)

    def _looking_out(self, piece: FrontierGoal, pose: PoseKey) -> PoseKey:
        """The pose at the piece's cell that faces an unseen cell beside it (or looks up or down to one)."""
        unknown = self.team_grid.unknown()
        x, y, z = piece.cell
        width, depth, height = unknown.shape
        for facing, (dx, dy) in FACING_VECTORS.items():
            if 0 <= x + dx < width and 0 <= y + dy < depth and unknown[x + dx, y + dy, z]:
                return (x, y, z, facing, 0)
        pitch = 1 if z + 1 < height and unknown[x, y, z + 1] else -1
        return (x, y, z, pose[3], pitch)
