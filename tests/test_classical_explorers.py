"""The classical explorers (explorer/policies/classical/): each planner's first decisions against a case
worked by hand from its paper's rule, the frontier and the walk, the map the team shares through its store,
and each explorer in a run, a sweep, the Python API and the PettingZoo environment."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from explorer.api import make_config, run
from explorer.policies.built_in import POLICIES, model_help
from explorer.policies.classical.catalogue import PLANNERS
from explorer.policies.classical.frontiers import FrontierGoal, TeamProblem, frontier_cells, frontier_goals
from explorer.policies.classical.hungarian import hungarian_frontier
from explorer.policies.classical.mtsp import mtsp_frontier
from explorer.policies.classical.nearest import nearest_frontier
from explorer.policies.classical.planner import _step_towards
from explorer.policies.classical.team_grid import TeamGrid
from explorer.policies.classical.utility import coordinated_assignment
from explorer.policies.classical.voronoi import voronoi_frontier
from explorer.policies.grid_arrays import known_path_distances
from explorer.records.errors import ConfigError
from explorer.team.redis_store import RedisRun
from explorer.team.store import InProcessStore
from harness.sweeps import read_results, write_sweep
from nodes.interfaces import StepReport
from perception.base import Pose
from tests.support.in_process import sweep_here
from tests.support.paths import ROOT

pytest_plugins = ("tests.support.redis_server",)
NAMES = ("nearest-frontier", "utility-frontier", "hungarian-frontier", "voronoi-frontier", "mtsp-frontier")


def open_problem(size, robots, goals, view_distance=3):
    """The team's problem on open ground of `size` (W, D): robots {id: (x, y)}, goals [(x, y)], costs by path."""
    passable = np.ones((*size, 1), dtype=bool)
    cells = {robot: (x, y, 0) for robot, (x, y) in robots.items()}
    distances = dict(zip(cells, known_path_distances(passable, list(cells.values()))))
    goal_list = tuple(FrontierGoal((x, y, 0), 1) for x, y in goals)
    costs = np.array([[distances[robot][goal.cell] for goal in goal_list] for robot in cells])
    return TeamProblem(tuple(cells), cells, goal_list, costs, distances, view_distance, passable)


def with_costs(costs):
    """A problem of three robots and three goals that are nothing but the cost matrix given."""
    problem = open_problem((3, 3), {"A": (0, 0), "B": (1, 1), "C": (2, 2)}, [(0, 1), (1, 0), (2, 1)])
    return TeamProblem(
        *(problem.robots, problem.cells, problem.goals),
        np.array(costs, dtype=float),
        *(
            problem.distances,
            problem.view_distance,
            problem.passable,
        ),
    )


def test_the_catalogue_names_the_five_explorers():
    assert tuple(PLANNERS) == NAMES


def test_the_policy_catalogue_gives_every_built_in_policy_with_its_traits_and_makes_the_help_of_model():
    assert tuple(POLICIES) == ("offline", "random", *NAMES)
    assert all(kind.decides_in_code and kind.cpu_slot for kind in POLICIES.values())
    assert [name for name, kind in POLICIES.items() if kind.search_prior] == ["offline"]
    assert [name for name, kind in POLICIES.items() if not kind.seed_free] == ["random"]
    assert [name for name, kind in POLICIES.items() if kind.plans_team] == list(NAMES)
    assert all(name in model_help() for name in POLICIES)


@pytest.mark.parametrize("name", ["random", "utility-frontier"])
def test_a_built_in_explorer_that_directs_no_one_is_refused_as_coordinator(name):
    with pytest.raises(ConfigError, match="--coordinator must be offline or a model's name"):
        make_config(agents=2, coordinator=name)


def test_the_hungarian_assignment_has_the_least_total_cost():
    # Worked by hand: A->1 (1), B->0 (2), C->2 (2) totals 5; every robot taking its nearest sends A and B to 1.
    costs = [[4, 1, 3], [2, 0, 5], [3, 2, 2]]
    problem = with_costs(costs)
    chosen = {robot: hungarian_frontier(problem, robot) for robot in problem.robots}
    assert chosen == {"A": 1, "B": 0, "C": 2}
    least = min(sum(costs[r][g] for r, g in enumerate(order)) for order in itertools.permutations(range(3)))
    assert sum(costs[r][chosen[robot]] for r, robot in enumerate(problem.robots)) == least == 5
    assert [nearest_frontier(problem, robot) for robot in ("A", "B")] == [1, 1]


def test_with_more_robots_than_goals_the_one_left_over_goes_to_its_nearest():
    problem = open_problem((10, 1), {"A": (0, 0), "B": (1, 0), "C": (9, 0)}, [(2, 0), (8, 0)])
    assert {robot: hungarian_frontier(problem, robot) for robot in problem.robots} == {"A": 0, "B": 0, "C": 1}


def test_utility_reduction_sends_the_second_robot_away_from_the_first_ones_goal():
    # Side by side; goal 0 is near both, goal 1 far. Burgard et al.: A takes goal 0 (utility 1, cost 2/10), whose
    # utility drops to 0; for B, goal 0 scores 0 - 3/11 and goal 1 scores 1 - 11/11 = 0: B goes far.
    problem = open_problem((12, 2), {"A": (0, 0), "B": (0, 1)}, [(2, 0), (10, 0)])
    assert coordinated_assignment(problem) == {"A": 0, "B": 1}
    assert [nearest_frontier(problem, robot) for robot in ("A", "B")] == [0, 0]  # uncoordinated: both to goal 0


def test_utility_reduction_reaches_only_as_far_as_the_sensor():
    # The far goal lies beyond the view distance from the near one: seen from there with probability 0, its
    # utility is untouched, and so the second robot's choice is its cost alone. Within the range it would not be.
    near = open_problem((12, 2), {"A": (0, 0), "B": (0, 1)}, [(2, 0), (5, 0)], view_distance=2)
    assert coordinated_assignment(near) == {"A": 0, "B": 1}
    assert coordinated_assignment(open_problem((12, 2), {"A": (0, 0), "B": (0, 1)}, [(2, 0), (5, 0)], 8)) == {
        "A": 0,
        "B": 0,  # goal 1 keeps 1 - (1 - 3/8) of its utility: 0.375 - 6/6 falls below goal 0's 0 - 3/6
    }


def test_voronoi_robots_keep_to_their_own_cells_and_fall_back_to_the_nearest():
    problem = open_problem((11, 1), {"A": (0, 0), "B": (10, 0)}, [(4, 0), (9, 0)])
    assert [voronoi_frontier(problem, robot) for robot in ("A", "B")] == [0, 1]
    lopsided = open_problem((11, 1), {"A": (0, 0), "B": (10, 0)}, [(1, 0), (3, 0)])
    assert voronoi_frontier(lopsided, "B") == 1  # B's cell holds no goal: its nearest anywhere


def test_the_routing_sends_each_robot_to_the_near_end_of_its_share():
    problem = open_problem((21, 1), {"A": (0, 0), "B": (20, 0)}, [(2, 0), (4, 0), (6, 0), (14, 0), (16, 0), (18, 0)])
    assert [mtsp_frontier(problem, robot) for robot in ("A", "B")] == [0, 5]


def test_the_routing_shares_the_goals_where_the_nearest_rule_would_not():
    # Every goal is nearer A; capacities of ceil(4 / 2) goals send B to the far pair.
    problem = open_problem((21, 1), {"A": (0, 0), "B": (4, 0)}, [(1, 0), (2, 0), (10, 0), (12, 0)])
    assert mtsp_frontier(problem, "A") == 0
    assert mtsp_frontier(problem, "B") == 2
    assert nearest_frontier(problem, "B") == 1


def grid_of(width, seen_xs, walls=()):
    grid = TeamGrid()
    grid.size = (width, 1, 1)
    grid.seen = np.zeros((width, 1, 1), dtype=bool)
    grid.walls = np.zeros((width, 1), dtype=bool)
    grid.open = np.zeros((width, 1), dtype=bool)
    grid.mark(tuple((x, 0, 0) for x in seen_xs), tuple(walls))
    return grid


def test_the_frontier_is_the_seen_cells_beside_unseen_ground_that_is_not_a_wall():
    assert np.argwhere(frontier_cells(grid_of(6, [0, 1, 2]))).tolist() == [[2, 0, 0]]
    assert not frontier_cells(grid_of(6, [0, 1, 2], [(3, 0)])).any()
    assert frontier_goals(grid_of(6, [3, 4, 5])) == (FrontierGoal((3, 0, 0), 1),)


def test_a_long_frontier_is_cut_into_goals_a_team_can_share():
    grid = TeamGrid()
    grid.size = (12, 2, 1)
    grid.seen = np.zeros((12, 2, 1), dtype=bool)
    grid.walls = np.zeros((12, 2), dtype=bool)
    grid.open = np.zeros((12, 2), dtype=bool)
    grid.mark(tuple((x, 0, 0) for x in range(12)), ())
    goals = frontier_goals(grid)  # the whole row borders the unseen row beside it: 12 cells, 3 pieces of 4
    assert [goal.cells for goal in goals] == [4, 4, 4]
    assert [goal.cell[0] for goal in goals] == [1, 5, 9]


@pytest.mark.parametrize(
    ("facing", "pitch", "expected"),
    [
        ("east", 0, "forward"),
        ("north", 0, "look_right"),
        ("south", 0, "look_left"),
        ("west", 0, "look_right"),
        ("east", 1, "look_down"),
    ],
)
def test_the_walk_turns_to_face_the_next_cell_then_goes_forward(facing, pitch, expected):
    distances = known_path_distances(np.ones((5, 3, 1), dtype=bool), [(4, 1, 0)])[0]
    assert _step_towards(Pose(1, 1, 0, facing, pitch), distances, (5, 3, 1)) == expected


def report(agent, step, cells, walls=()):
    return StepReport(agent, step, None, [], seen_cells=tuple(cells), seen_walls=tuple(walls))


@pytest.fixture(params=["in-process", "redis"])
def store(request):
    if request.param == "redis":
        made = RedisRun(request.getfixturevalue("redis_server").url, request.getfixturevalue("run_id")).store()
    else:
        made = InProcessStore()
    for agent in ("Agent1", "Agent2"):
        made.register_agent(agent, {"position": [0, 0, 0], "facing": "north", "pitch": 0, "roll": 0})
    return made


def test_the_team_map_holds_each_cell_and_wall_once_in_the_order_first_seen(store):
    store.commit_step(
        [report("Agent1", 1, [(0, 0, 0), (1, 0, 0)], [(5, 5)]), report("Agent2", 1, [(1, 0, 0), (2, 0, 0)])]
    )
    first = store.map_news((0, 0))
    assert first.cells == ((0, 0, 0), (1, 0, 0), (2, 0, 0)) and first.walls == ((5, 5),) and first.read == (3, 1)
    store.commit_step([report("Agent1", 2, [(2, 0, 0), (3, 0, 0)], [(5, 5), (6, 5)])])
    later = store.map_news(first.read)
    assert later.cells == ((3, 0, 0),) and later.walls == ((6, 5),) and later.read == (4, 2)
    assert store.map_news(later.read).cells == ()


def summary_of(run_dir):
    return json.loads((run_dir / "summary.json").read_text())


@pytest.mark.parametrize("model", NAMES)
def test_each_explorer_runs_from_the_python_api_on_the_shared_map(tmp_path, embedder, model):
    config = make_config(model=model, agents=3, steps=25, world="gen:house", world_seed=1001, run_dir=tmp_path / "r")
    result = run(config, embedder=embedder)
    summary = summary_of(result.run_dir)
    assert summary["status"] == "completed"
    assert {agent["policy"] for agent in summary["per_agent"].values()} == {model}
    assert summary["messages_sent"] == 0  # the map goes through the store, not messages
    # The team explores: a third of the house seen in 25 steps (a team turning on the spot sees a few cells).
    assert summary["team"]["cells_seen"] > summary["team"]["total_cells"] / 3


def test_the_finder_walks_to_a_target_the_team_found(tmp_path, embedder):
    config = make_config(
        model="utility-frontier",
        agents=2,
        steps=60,
        world="gen:house?find=toothbrush,laptop",
        world_seed=1002,
        run_dir=tmp_path / "r",
    )
    trace = [json.loads(line) for line in (run(config, embedder=embedder).run_dir / "trace.jsonl").open()]
    walks = [line for line in trace if line.get("decision") and "the team found" in line["decision"]["reason"]]
    assert walks, "no finder walked to a target it found"
    first = walks[0]
    later = [line for line in trace if line["agent_id"] == first["agent_id"] and line["step"] > first["step"]]
    assert later, "the run ended as the walk began"


def test_a_classical_explorer_under_a_coordinator_is_refused_in_one_line():
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--model", "hungarian-frontier", "--coordinator", "offline"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "not with --coordinator" in result.stderr
    assert "Traceback" not in result.stderr


def test_each_explorer_runs_in_a_sweep(tmp_path):
    out = tmp_path / "out"
    sweep_file = write_sweep(
        tmp_path,
        f"out: {out}\ngrid:\n  model: [{', '.join(NAMES)}]\nfixed:\n  agents: 2\n  steps: 8\n  world: apartment\n",
    )
    result = sweep_here(sweep_file, "--parallel", "2")
    assert result.returncode == 0, result.stderr
    rows = read_results(out)
    assert sorted(row["model"] for row in rows) == sorted(NAMES)
    assert {row["status"] for row in rows} == {"completed"}
