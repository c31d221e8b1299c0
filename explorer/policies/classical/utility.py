"""`utility-frontier`: Burgard et al.'s coordinated exploration, trading a goal's utility against its cost.

W. Burgard, M. Moors, C. Stachniss and F. E. Schneider, "Coordinated multi-robot exploration", IEEE
Transactions on Robotics 21(3), 2005, pp. 376-386 (Table I, the assignment loop).

Every goal starts with utility 1. Robots are assigned one at a time: of the robots still without a goal, the
robot and goal with the greatest U(t) - BETA * V(i, t) are paired, V being the robot's cost to reach the goal;
then every goal t' near the one taken loses P(|t - t'|) of its utility, the chance that what it shows is seen
from t: 1 - d / range within the sensor's range, 0 beyond. So a second robot avoids the first one's goal and
what it will see from there.

The parameters the paper leaves to the user, fixed before any measurement:
- BETA = 1, the paper's own setting in its experiments; V is the moves to the goal divided by the largest
  finite cost of the team's problem, so that both terms lie in [0, 1];
- the range of P is the world's view distance (the sensor's range), and d is the straight-line distance in
  cells between the two goals.

Where this grid version departs from the paper: the cost is the moves over known free ground (a
breadth-first pass), not a value-iteration cost over occupancy probabilities; P uses the straight-line
distance, not the visibility between the goals; goals are the frontier's pieces (frontiers.py); the team's
map is shared through its store; and the assignment is made again every step.
"""

from __future__ import annotations

import numpy as np

from explorer.policies.classical.frontiers import TeamProblem
from explorer.policies.classical.planner import Planner

BETA = 1.0


def utility_frontier(problem: TeamProblem, robot: str) -> int | None:
    """The goal Burgard et al.'s loop gives `robot` (None: no goal it can reach)."""
    return coordinated_assignment(problem).get(robot)


def coordinated_assignment(problem: TeamProblem) -> dict[str, int]:
    """Every robot's goal, assigned one robot at a time (ties: the first robot, then the first goal)."""
    costs = problem.costs
    finite = costs[np.isfinite(costs)]
    scale = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    utility = np.ones(len(problem.goals))
    waiting = list(range(len(problem.robots)))
    assigned: dict[str, int] = {}
    while waiting and len(problem.goals):
        scores = utility[None, :] - BETA * costs[waiting] / scale  # inf cost: -inf, never chosen
        row, goal = np.unravel_index(int(np.argmax(scores)), scores.shape)
        if not np.isfinite(scores[row, goal]):
            break
        robot = waiting.pop(int(row))
        assigned[problem.robots[robot]] = int(goal)
        utility -= _seen_from(problem, int(goal))
    return assigned


def _seen_from(problem: TeamProblem, goal: int) -> np.ndarray:
    """P(|t - t'|) for each goal t': how likely what it shows is seen from `goal` (1 for the goal itself)."""
    cells = np.array([g.cell for g in problem.goals], dtype=float)
    apart = np.sqrt(((cells - cells[goal]) ** 2).sum(axis=1))
    reach = float(problem.view_distance)
    return np.where(apart < reach, 1.0 - apart / reach, 0.0)


UTILITY_FRONTIER = Planner(
    "utility-frontier",
    utility_frontier,
    True,
    "utility less cost, goals near a teammate's discounted (Burgard et al. 2005)",
)
