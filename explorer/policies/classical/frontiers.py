"""The frontier, the goals every classical explorer chooses among, and what reaching one costs each robot.

A frontier cell (Yamauchi 1997) is a cell known free (seen) beside one not yet seen that may be free: one
move away along any axis, a level above or below included. The frontier's cells fall into connected groups;
each group is cut into tiles of CLUSTER x CLUSTER columns (a long frontier is several goals a team can share),
and each piece is one goal: its cell nearest the piece's centre, worth the piece's cells. What a goal costs a
robot is the moves of the shortest way over the cells the team knows free (a breadth-first pass a robot).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.policies import grid_arrays
from explorer.policies.classical.team_grid import TeamGrid
from nodes.decision_context import Cell

CLUSTER = 4  # a goal covers at most CLUSTER x CLUSTER columns of the frontier, on one level


@dataclass(frozen=True)
class FrontierGoal:
    """One piece of the frontier: the cell to reach, and how many frontier cells the piece holds."""

    cell: Cell
    cells: int


@dataclass(frozen=True)
class TeamProblem:
    """What a team's assignment rests on: the robots (team order) and their cells, the goals, each robot's moves
    to each goal (inf: no way over known ground), and each robot's distance field (for the Voronoi split)."""

    robots: tuple[str, ...]
    cells: Mapping[str, Cell]
    goals: tuple[FrontierGoal, ...]
    costs: np.ndarray  # (robots, goals)
    distances: Mapping[str, np.ndarray]  # robot -> (W, D, H) moves from it
    view_distance: int
    passable: np.ndarray  # (W, D, H): the cells the team knows free, for a planner's further passes


def frontier_cells(grid: TeamGrid) -> np.ndarray:
    """(W, D, H) bool: the seen cells with an unseen, possibly free cell one move away."""
    unknown = grid.unknown()
    beside = np.zeros_like(unknown)
    for axis in range(3):
        low = tuple(slice(0, -1) if a == axis else slice(None) for a in range(3))
        high = tuple(slice(1, None) if a == axis else slice(None) for a in range(3))
        beside[low] |= unknown[high]
        beside[high] |= unknown[low]
    return grid.seen & beside


def frontier_goals(grid: TeamGrid, spent: frozenset[Cell] = frozenset()) -> tuple[FrontierGoal, ...]:
    """The frontier's pieces as goals, in the order of their cells (x, then y, then level); `spent` are cells
    that are goals no more (a robot stood there and no turn showed more)."""
    cells = frontier_cells(grid)
    grid_arrays.unmark(cells, spent)
    labels, _ = grid_arrays.connected_groups(cells)
    at = np.argwhere(labels)
    if not len(at):
        return ()
    keys = np.stack([labels[tuple(at.T)], at[:, 0] // CLUSTER, at[:, 1] // CLUSTER, at[:, 2]], axis=1)
    _, piece = np.unique(keys, axis=0, return_inverse=True)
    goals = []
    for index in range(piece.max() + 1):
        members = at[piece.ravel() == index]
        centre = members.mean(axis=0)
        nearest = members[np.argmin(((members - centre) ** 2).sum(axis=1))]  # the first of those as near
        goals.append(FrontierGoal(tuple(int(v) for v in nearest), len(members)))  # type: ignore[arg-type]
    return tuple(sorted(goals, key=lambda goal: goal.cell))


def team_problem(
    grid: TeamGrid,
    robots: Sequence[str],
    cells: Mapping[str, Cell],
    view_distance: int,
    spent: frozenset[Cell] = frozenset(),
) -> TeamProblem:
    """The goals, and each robot's moves to each (the goals no robot can reach are left out)."""
    passable = grid.passable()
    distances = dict(zip(robots, grid_arrays.known_path_distances(passable, [cells[robot] for robot in robots])))
    goals = frontier_goals(grid, spent)
    costs = np.array([[distances[robot][goal.cell] for goal in goals] for robot in robots]).reshape(
        len(robots), len(goals)
    )
    reachable = np.isfinite(costs).any(axis=0)
    return TeamProblem(
        tuple(robots),
        dict(cells),
        tuple(goal for goal, kept in zip(goals, reachable) if kept),
        costs[:, reachable],
        distances,
        view_distance,
        passable,
    )
