"""Memory per agent (issue 51, part 3): what every agent of a team has is shared, each keeps only its own."""

import gc
import random
import tracemalloc
from collections import deque

from explorer.policies.grid_map import GridMap, open_grid
from explorer.policies.offline import OfflineExplorer
from explorer.team.store import InProcessStore
from perception.actions import ACTIONS
from perception.base import Pose
from perception.families.generate import open_world
from perception.mock import MockPerception
from tests.test_offline_explorer import play

HALL = "gen:hall?size=60x60"
# What one built-in explorer of a team of 8 may hold after 6 steps on a 60x60 hall: its map, its caches.
# A map that kept its own copy of the grid's moves held 2.2 MB (0.65 MB without); one that kept each
# teammate's sight of each step grew with the team.
EXPLORER_BYTES = 1_000_000


def test_maps_of_one_grid_share_its_cells_moves_and_view_rays():
    first, second = GridMap(), GridMap()
    for grid in (first, second):
        grid.learn_view((30, 20, 2), 4, Pose(3, 3, 0, "east"), [(3, 3, 0)], [])
    assert first.grid is second.grid is open_grid((30, 20, 2))
    assert first.cone is second.cone


def test_a_map_beside_a_wall_it_knows_keeps_its_own_moves_there():
    # The moves a map works out where it knows no wall are shared; a teammate that knows one must not use them.
    blind, knowing = GridMap(), GridMap()
    for grid in (blind, knowing):
        grid.learn_view((6, 1, 1), 2, Pose(0, 0, 0, "east"), [(0, 0, 0)], [])
    start, end = (0, 0, 0, "east", 0), (5, 0, 0)
    assert blind.path_to(start, end, ACTIONS) == "forward"
    knowing.add_wall((1, 0))
    assert knowing.path_to(start, end, ACTIONS) is None
    assert blind.path_to(start, end, ACTIONS) == "forward"
    assert blind.grid is knowing.grid and blind.grid.moves[tuple(ACTIONS)]


def reference_split(size, walls, mine, others):
    """nearer_others as a plain breadth-first search over every cell, for comparison."""
    width, depth, height = size

    def beside(cell):
        x, y, z = cell
        for after in ((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1), (x, y, z - 1)):
            if 0 <= after[0] < width and 0 <= after[1] < depth and 0 <= after[2] < height and after[:2] not in walls:
                yield after

    distance = dict.fromkeys([mine, *others], 0)
    ours = {mine}
    queue = deque(distance)
    while queue:
        cell = queue.popleft()
        for after in beside(cell):
            if after not in distance:
                distance[after] = distance[cell] + 1
                queue.append(after)
                if cell in ours:
                    ours.add(after)
            elif cell in ours and distance[after] == distance[cell] + 1:
                ours.add(after)
    return frozenset(distance.keys() - ours)


def test_the_split_with_teammates_follows_the_walls_as_they_are_met():
    # The shared grid's moves hold where no wall is known; a map's own, beside the walls it met.
    rng = random.Random(5)
    size = (14, 11, 2)
    grid = GridMap()
    grid.learn_view(size, 3, Pose(0, 0, 0, "east"), [(0, 0, 0)], [])
    free = [(x, y, z) for x in range(14) for y in range(11) for z in range(2)]
    for _ in range(40):
        for _ in range(4):
            grid.add_wall((rng.randrange(14), rng.randrange(11)))
        open_cells = [cell for cell in free if cell[:2] not in grid.walls]
        mine, *others = rng.sample(open_cells, 4)
        assert grid.nearer_others(mine, others).cells() == reference_split(size, grid.walls, mine, others)


def test_a_built_in_explorer_keeps_no_copy_of_the_world_nor_its_teammates_sights():
    world = open_world(HALL, 0)
    open_grid(world.size)  # the team's, made by its first map
    agents = [f"Agent{i}" for i in range(1, 9)]
    perception = MockPerception(world, InProcessStore(), agents, seed=1)
    gc.collect()
    tracemalloc.start()
    try:
        explorers = {agent_id: OfflineExplorer() for agent_id in agents}
        play(perception, explorers, steps=6)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert all(explorer.map.grid is explorers["Agent1"].map.grid for explorer in explorers.values())
    assert held / len(agents) < EXPLORER_BYTES, f"{held / len(agents):,.0f} bytes per explorer"
