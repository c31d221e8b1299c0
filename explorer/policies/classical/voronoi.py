"""`voronoi-frontier`: each robot explores the frontier in its own cell of a Voronoi partition of the map.

J. Hu, H. Niu, J. Carrasco, B. Lennox and F. Arvin, "Voronoi-based multi-robot autonomous exploration in unknown
environments via deep reinforcement learning", IEEE Transactions on Vehicular Technology 69(12), 2020; the
partition as in K. M. Wurm, C. Stachniss and W. Burgard, "Coordinated multi-robot exploration using a
segmentation of the environment", IEEE/RSJ IROS 2008, splits the map so that robots do not cover the same ground.

The known map is split among the robots: each cell belongs to the robot with the shortest way to it over known
free ground (ties: the first in the team's order). A robot goes to the nearest goal in its own cell; where its
cell has no frontier left, to its nearest goal anywhere.

Where this grid version departs from the paper: the partition is by path distance on the grid (a geodesic
Voronoi split), not by Euclidean distance; within its cell a robot takes the nearest goal, where Hu et al. learn
the choice with deep reinforcement learning; the goals are the frontier's pieces (frontiers.py); the team's map is
shared through its store; and the partition is made again every step.
"""

from __future__ import annotations

from explorer.policies.classical.frontiers import TeamProblem
from explorer.policies.classical.planner import Planner, nearest_goal


def voronoi_frontier(problem: TeamProblem, robot: str) -> int | None:
    """The robot's nearest goal in its own Voronoi cell, else its nearest goal."""
    mine = {index: owner(problem, index) == robot for index in range(len(problem.goals))}
    return nearest_goal(problem, robot, mine) if any(mine.values()) else nearest_goal(problem, robot)


def owner(problem: TeamProblem, goal: int) -> str:
    """The robot whose cell of the partition holds the goal: the nearest by path (ties: team order)."""
    cell = problem.goals[goal].cell
    return min(problem.robots, key=lambda robot: (problem.distances[robot][cell], problem.robots.index(robot)))


VORONOI_FRONTIER = Planner(
    "voronoi-frontier", voronoi_frontier, True, "the nearest frontier in its own Voronoi cell (Hu et al. 2020)"
)
