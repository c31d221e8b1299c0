"""`hungarian-frontier`: the optimal assignment of robots to frontier goals, by the Hungarian method.

H. W. Kuhn, "The Hungarian method for the assignment problem", Naval Research Logistics Quarterly 2, 1955;
as a multi-robot exploration strategy, J. Faigl, M. Kulich and L. Přeučil, "Goal assignment using distance cost
in multi-robot exploration", IEEE/RSJ IROS 2012 (the "Hungarian" strategy it compares with greedy and MTSP
assignment).

Each replan pairs robots with goals, each goal to one robot at most, so that the total of the robots' moves to
their goals is the least any such pairing has. Where there are more robots than goals, the robots left over go
to their nearest goal.

Where this grid version departs from the paper: the cost is the moves over known free ground; the goals are the
frontier's pieces (frontiers.py), not the representatives of a fixed number of clusters; a goal no robot can
reach is left out, and a robot that can reach none is given none; the team's map is shared through its store;
and the assignment is made again every step, not when a robot reaches its goal.
"""

from __future__ import annotations

import numpy as np

from explorer.policies import grid_arrays
from explorer.policies.classical.frontiers import TeamProblem
from explorer.policies.classical.planner import Planner, nearest_goal

UNREACHABLE = 1e9  # the cost the solver is given for no way at all: never chosen while a way exists


def hungarian_frontier(problem: TeamProblem, robot: str) -> int | None:
    """The goal the least-total-cost assignment gives `robot`, or its nearest where it is left over."""
    if not len(problem.goals):
        return None
    costs = np.where(np.isfinite(problem.costs), problem.costs, UNREACHABLE)
    me = problem.robots.index(robot)
    for row, goal in grid_arrays.cheapest_assignment(costs):
        if row == me:
            return goal if np.isfinite(problem.costs[row, goal]) else nearest_goal(problem, robot)
    return nearest_goal(problem, robot)


HUNGARIAN_FRONTIER = Planner(
    "hungarian-frontier", hungarian_frontier, True, "the assignment of least total moves (Hungarian method)"
)
