"""`mtsp-frontier`: multi-robot routing over the frontier's goals (the multiple travelling salesman problem),
solved by OR-Tools' routing solver with a time limit per replan. The one module that imports ortools.

J. Faigl, M. Kulich and L. Přeučil, "Goal assignment using distance cost in multi-robot exploration", IEEE/RSJ
IROS 2012 (the MTSP strategy: each robot goes to the first goal of its route in a solution of the multiple
travelling salesman problem over the goals); the baseline COMRES-VLM (arXiv 2509.26324) reports against.

Each replan routes the robots, each from where it stands, over the goals: every goal is visited by one robot,
the routes end anywhere (open routes), no robot takes more than its share of the goals (a capacitated routing
problem, CVRP, as COMRES-VLM's baseline solves it), and the total of the routes' moves is the least the solver
finds. Each robot goes to the first goal of its route; a robot whose route is empty goes to its nearest.

The parameters the paper leaves open, fixed before any measurement:
- MAX_GOALS = 40: the goals routed are the 40 nearest to any robot (the rest wait for a later replan), which
  bounds a replan's time whatever the map;
- each robot's capacity is its share of the goals routed, ceil(goals / robots): the routes split the work
  evenly, where a plain total-moves objective would send one robot round every goal;
- the solver starts from the cheapest-arc tour and improves it by greedy descent, which ends at a local
  optimum: TIME_LIMIT (0.15 s) only caps it, so that on the same map the same routes come back;
- the goals are the frontier's pieces, at most CLUSTER x CLUSTER columns each (frontiers.py), where Faigl et al.
  cluster the goals by k-means.

Where this grid version departs from the paper: the cost is the moves over known free ground (a breadth-first
pass from each goal); the team's map is shared through its store; and the routes are made again every step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from explorer.policies import grid_arrays
from explorer.policies.classical.frontiers import TeamProblem
from explorer.policies.classical.planner import Planner, nearest_goal

MAX_GOALS = 40
TIME_LIMIT = 0.15  # seconds per replan, at most
NO_WAY = 10**6  # an arc's cost where there is no way over known ground: taken only if nothing else is left


def mtsp_frontier(problem: TeamProblem, robot: str) -> int | None:
    """The first goal of the robot's route, or its nearest goal where its route is empty."""
    if not len(problem.goals):
        return None
    goals = _goals_routed(problem)
    routes = solve_routes(_arc_costs(problem, goals), len(problem.robots))
    first = routes[problem.robots.index(robot)]
    return goals[first[0]] if first else nearest_goal(problem, robot)


def _goals_routed(problem: TeamProblem) -> list[int]:
    """The MAX_GOALS goals nearest to any robot (in the goals' order, of those as near)."""
    nearest = problem.costs.min(axis=0)
    return sorted(sorted(range(len(problem.goals)), key=lambda goal: (nearest[goal], goal))[:MAX_GOALS])


def _arc_costs(problem: TeamProblem, goals: list[int]) -> np.ndarray:
    """The routing's matrix: nodes are the robots' starts, then the goals, then one end every route may stop
    at for nothing. A start is never entered; an arc with no way costs NO_WAY."""
    robots, count = len(problem.robots), len(goals)
    size = robots + count + 1
    arcs = np.full((size, size), NO_WAY, dtype=np.int64)
    cells = [problem.goals[goal].cell for goal in goals]
    arcs[:robots, robots : robots + count] = _finite(problem.costs[:, goals])
    from_goals = grid_arrays.known_path_distances(problem.passable, cells)
    at = tuple(np.array(cells).T)
    for index in range(count):
        arcs[robots + index, robots : robots + count] = _finite(from_goals[index][at])
    arcs[:, -1] = 0  # a route ends where it likes
    np.fill_diagonal(arcs, 0)
    return arcs


def _finite(moves: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(moves), moves, NO_WAY).astype(np.int64)


def solve_routes(arcs: np.ndarray, robots: int) -> list[list[int]]:
    """Each robot's route as the goals (0-based, in the matrix's goal block) it visits in order: every goal on
    one route, the routes open, no route with more than its share of the goals, the total moves least."""
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2  # here: the catalogue's --help waits for none

    end, goals = len(arcs) - 1, len(arcs) - 1 - robots
    manager = pywrapcp.RoutingIndexManager(len(arcs), robots, list(range(robots)), [end] * robots)
    routing = pywrapcp.RoutingModel(manager)
    transit = routing.RegisterTransitMatrix(arcs.tolist())  # in C++: no Python call per arc
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    goal_count = routing.RegisterUnaryTransitVector([0] * robots + [1] * goals + [0])
    routing.AddDimensionWithVehicleCapacity(goal_count, 0, [math.ceil(goals / robots)] * robots, True, "goals")
    settings = pywrapcp.DefaultRoutingSearchParameters()
    settings.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    settings.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GREEDY_DESCENT
    settings.time_limit.FromMilliseconds(int(TIME_LIMIT * 1000))
    solution = routing.SolveWithParameters(settings)
    if solution is None:
        return [[] for _ in range(robots)]
    return [_route(routing, manager, solution, vehicle, robots) for vehicle in range(robots)]


def _route(routing: Any, manager: Any, solution: Any, vehicle: int, robots: int) -> list[int]:
    """The goals one robot's route visits, in order."""
    index, visited = solution.Value(routing.NextVar(routing.Start(vehicle))), []
    while not routing.IsEnd(index):
        visited.append(manager.IndexToNode(index) - robots)
        index = solution.Value(routing.NextVar(index))
    return visited


MTSP_FRONTIER = Planner(
    "mtsp-frontier", mtsp_frontier, True, "the first goal of its route in the team's routing (Faigl et al. 2012)"
)
