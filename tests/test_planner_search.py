"""The planner's search (explorer/policies/grid_map.py) against a plain reference, on maps an offline team makes.

The search ends as soon as no farther pose can be among the best, and splits the
ground between teammates in one pass; the references search as far as a full view
could still be worth it, and measure every distance twice. Both must agree exactly.
"""

import heapq
from collections import deque

import pytest

from explorer.policies.grid_map import (
    ACTION_COST,
    KEEP_SHARE,
    Goal,
    GridMap,
    _insert,
    utility,
)
from explorer.policies.offline import OfflineExplorer
from explorer.team.store import InProcessStore
from perception.mock import MockPerception
from perception.world import SHIPPED_WORLDS, load_world
from tests.test_offline_explorer import context_for

SHIPPED = sorted(SHIPPED_WORLDS.glob("*.yaml"))
TEAM = ("Agent1", "Agent2", "Agent3")
STEPS = 10


def reference_goals(grid, start, actions, claimed, theirs, limit, keep):
    """The plain search: every pose cheapest way first, on until a full view could not be worth it."""
    full_view = 1 + sum(2 * ahead + 1 for ahead in range(1, grid.view_distance + 1))
    settled, queue, pushed, found, kept = set(), [(0.0, 0, start, None, 0)], 0, [], None
    while queue:
        cost, _, pose, first_action, steps = heapq.heappop(queue)
        if pose in settled:
            continue
        settled.add(pose)
        floor = found[-1].utility if len(found) >= limit else float("-inf")
        if keep is not None and kept is None:
            floor *= KEEP_SHARE
        if utility(full_view, cost) <= floor:
            break
        if pose != start:
            worth, new = grid.gain(pose, claimed, theirs)
            if new and worth > 0:
                goal = Goal(pose, worth, new, cost, steps, first_action)
                if pose == keep:
                    kept = goal
                found = _insert(found, goal, limit)
        for action, after in grid.neighbours(pose, actions):
            if after not in settled:
                pushed += 1
                heapq.heappush(queue, (cost + ACTION_COST[action], pushed, after, first_action or action, steps + 1))
    return found, kept


def reference_nearer_others(grid, mine, others):
    def distances(starts):
        distance, queue = dict.fromkeys(starts, 0), deque(starts)
        while queue:
            x, y, z = cell = queue.popleft()
            for after in ((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1), (x, y, z - 1)):
                if (
                    after not in distance
                    and grid.in_grid(*after[:2])
                    and 0 <= after[2] < grid.size[2]
                    and after[:2] not in grid.walls
                ):
                    distance[after] = distance[cell] + 1
                    queue.append(after)
        return distance

    mine_distance = distances([mine])
    return frozenset(c for c, d in distances(others).items() if d < mine_distance.get(c, d + 1))


class CheckedMap(GridMap):
    """A map whose searches are each checked against the references, also for more goals and other goals kept."""

    def __init__(self):
        super().__init__()
        self.searches = 0

    def goals(self, start, actions, claimed=None, theirs=None, limit=1, keep=None):
        self.searches += 1
        checks = [(limit, keep)]
        if self.searches % 2:  # the references are slow: the other cases every other step
            many, _ = reference_goals(self, start, actions, claimed, theirs, 8, None)
            far = many[-1].pose if many else None  # a goal kept that the search may have to walk on to
            checks += [(6, keep), (1, far), (6, far), (1, start)]
        for more, kept_pose in checks:
            expected = reference_goals(self, start, actions, claimed, theirs, more, kept_pose)
            assert super().goals(start, actions, claimed, theirs, more, kept_pose) == expected, (start, more, kept_pose)
        return super().goals(start, actions, claimed, theirs, limit, keep)

    def nearer_others(self, mine, others):
        assert super().nearer_others(mine, others).cells() == reference_nearer_others(self, mine, others)
        return super().nearer_others(mine, others)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_the_search_finds_what_the_plain_search_finds(path):
    perception = MockPerception(load_world(path), InProcessStore(), TEAM, seed=3)
    explorers = {agent: OfflineExplorer() for agent in TEAM}
    for explorer in explorers.values():
        explorer.map = CheckedMap()
    said, history = [], {agent: [] for agent in TEAM}
    for step in range(1, STEPS + 1):
        contexts = {agent: context_for(perception, agent, step, history[agent], messages=said) for agent in TEAM}
        said = []
        for agent, explorer in explorers.items():
            decision = explorer.choose(contexts[agent])
            if decision.message_to_others:
                said.append((agent, decision.message_to_others))
            result = perception.execute_action(agent, decision.action)
            history[agent].append({"step": step, "action": decision.action, "outcome": result.outcome, "detail": ""})
    assert all(explorer.map.searches == STEPS for explorer in explorers.values())
