"""The shortest path of SPL: the cells from which an object is in sight, and the shortest walk to them, checked
against the world's own sight and a walk that tries every pose."""

from collections import deque

import pytest

from perception.base import FACINGS, Pose
from perception.geometry import apply_action
from perception.sight_paths import sight_cells, target_path_lengths, walking_distances
from perception.world import load_world, world_from_mapping
from tests.support.paths import WORLDS

MOVES = ("forward", "backward", "move_left", "move_right", "move_up", "move_down")


def seen_from(world):
    """{object: the cells (x, y, level) of every pose that sees it}, by asking the world's view of every pose."""
    seen = {name: set() for name in world.objects}
    for x, y, _ in world.free_cells():
        for z in range(world.height):
            for facing in FACINGS:
                for pitch in (-1, 0, 1):
                    for name in world.view(Pose(x, y, z, facing, pitch))[0]:
                        seen[name].add((x, y, z))
    return seen


@pytest.mark.parametrize("name", ["warehouse", "office"])
def test_an_object_is_in_sight_from_exactly_the_cells_of_the_poses_that_see_it(name):
    world = load_world(WORLDS / f"{name}.yaml")
    for thing, cells in seen_from(world).items():
        assert sight_cells(world, world.objects[thing]) == cells, thing


@pytest.mark.parametrize("target", ["fire_extinguisher", "toolbox", "helmet"])  # on the floor, on a top shelf
def test_the_shortest_path_is_the_fewest_moves_of_any_pose_to_one_that_sees_the_target(target):
    world = load_world(WORLDS / "warehouse.yaml")  # three levels: rising and descending are moves too
    starts = [(0, 0, 0), (0, 9, 0)]
    assert all(world.is_free(*start) for start in starts)
    seen = seen_from(world)[target]
    # A walk that tries every move of every pose (facings and pitches included) until one sees it.
    queue = deque((Pose(*start, facing, 0), 0) for start in starts for facing in FACINGS)
    visited = {pose for pose, _ in queue}
    while queue:
        pose, moved = queue.popleft()
        if pose.cell in seen:
            break
        for action in MOVES:
            after, outcome, _ = apply_action(pose, action, world.size, world.walls)
            if outcome == "moved" and after not in visited:
                visited.add(after)
                queue.append((after, moved + 1))
    assert moved > 0 and target_path_lengths(world, starts, [target]) == {target: moved}


def test_a_wall_makes_the_walk_go_round_and_a_goal_out_of_reach_has_none():
    world = world_from_mapping(
        {"name": "split", "size": [5, 3], "walls": [[2, 0], [2, 1]], "objects": [{"name": "lamp", "position": [4, 0]}]},
        "split",
    )
    # (0, 0) to (4, 0): up to y = 2 to pass the wall's end, and back down: 4 across and 2 up and 2 down.
    assert walking_distances(world, [(0, 0, 0)], {"there": {(4, 0, 0)}, "nowhere": set()}) == {
        "there": 8,
        "nowhere": None,
    }
    assert walking_distances(world, [(0, 0, 0), (3, 0, 0)], {"there": {(4, 0, 0)}}) == {"there": 1}  # the nearest
