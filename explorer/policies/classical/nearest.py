"""`nearest-frontier`: Yamauchi's frontier-based exploration, for several robots.

B. Yamauchi, "Frontier-based exploration using multiple robots", Proc. 2nd International Conference on
Autonomous Agents (Agents '98), 1998, pp. 47-53; the frontier itself from B. Yamauchi, "A frontier-based
approach for autonomous exploration", Proc. IEEE CIRA 1997.

Each robot goes to the nearest frontier by the shortest way over known free ground, and chooses again as
the map grows. The robots share one map and nothing else: no robot reckons with where another goes.

Where this grid version departs from the paper: the map is the grid's cells, not an evidence grid from sonar
(a cell is free once seen, a column a wall once seen so); the frontier's pieces are cut at CLUSTER columns
(frontiers.py) where the paper keeps each connected region whole above a minimum size; the robot stands at
the piece's cell nearest its centre, not the region's centroid, which may be out of reach; the map is shared
through the team's store, committed once a step, not broadcast as each robot's local grid; and the robot
replans every step rather than when it reaches its goal.
"""

from __future__ import annotations

from explorer.policies.classical.frontiers import TeamProblem
from explorer.policies.classical.planner import Planner, nearest_goal


def nearest_frontier(problem: TeamProblem, robot: str) -> int | None:
    """The robot's own nearest goal (ties: the first in the goals' order)."""
    return nearest_goal(problem, robot)


NEAREST_FRONTIER = Planner("nearest-frontier", nearest_frontier, False, "the nearest frontier (Yamauchi 1998)")
