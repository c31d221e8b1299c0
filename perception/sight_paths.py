"""How far a search target lies from where a team starts, on the true world: the shortest path of SPL.

SPL (success weighted by path length; Anderson et al. 2018, "On Evaluation of Embodied Navigation Agents")
weighs each success by the shortest path over the path taken. Here a target is found when an agent sees one
of its objects, so the shortest path to it ends at the nearest cell from which one of them is in sight:

- a path is counted in cells moved, by the grid's moves (perception/geometry.py): a step to one of the four
  neighbouring cells on the grid that is not a wall, or one level up or down in the same column. Turning and
  tilting the head move nothing and cost nothing;
- a pose at (x, y, z) sees the level z + pitch (pitch -1, 0 or 1): its own cell, and facing each of the four
  ways a cone of view_distance cells (geometry.ViewCone). Over the four facings that is every cell within
  view_distance cells each way (Chebyshev) whose line of sight is clear (geometry.line_of_sight). A target's
  object at (x, y, z) is so in sight from every free cell of a level z - 1, z or z + 1 whose column is its own
  or within view_distance each way of it with a clear line of sight: from there turns and tilts alone show it;
- from the team's starts: the shortest of the paths from each start, the team's best.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

from perception.geometry import line_of_sight
from perception.targets import is_target_object
from perception.world import World

Cell3 = tuple[int, int, int]  # (x, y, level)
K = TypeVar("K", bound=Hashable)


def sight_cells(world: World, cell: Cell3) -> set[Cell3]:
    """The free cells (x, y, level) from which a pose sees `cell` after turning and tilting only."""
    ox, oy, oz = cell
    reach = world.view_distance
    levels = [z for z in (oz - 1, oz, oz + 1) if 0 <= z < world.height]
    columns = [
        (x, y)
        for x in range(max(0, ox - reach), min(world.width, ox + reach + 1))
        for y in range(max(0, oy - reach), min(world.depth, oy + reach + 1))
        if (x, y) not in world.walls and ((x, y) == (ox, oy) or line_of_sight((x, y), (ox, oy), world.walls))
    ]
    return {(x, y, z) for x, y in columns for z in levels}


def walking_distances(world: World, starts: Iterable[Cell3], goals: Mapping[K, set[Cell3]]) -> dict[K, int | None]:
    """Per goal, the fewest cells moved from the nearest of `starts` to the nearest of its cells (None: none is
    reached). One breadth-first walk from every start at once over the free cells, which ends once every goal
    is met."""
    waiting: dict[Cell3, list[K]] = {}
    for key, cells in goals.items():
        for cell in cells:
            waiting.setdefault(cell, []).append(key)
    found: dict[K, int] = {}
    reached = {start for start in starts if world.is_free(*start)}
    queue = deque((start, 0) for start in sorted(reached))
    while queue and len(found) < len(goals):
        (x, y, z), distance = queue.popleft()
        for key in waiting.get((x, y, z), ()):
            found.setdefault(key, distance)  # the first time is the nearest: the walk goes out in order
        for near in ((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1), (x, y, z - 1)):
            if near not in reached and world.is_free(*near):
                reached.add(near)
                queue.append((near, distance + 1))
    return {key: found.get(key) for key in goals}


def target_path_lengths(world: World, starts: Iterable[Cell3], targets: Iterable[str]) -> dict[str, int | None]:
    """Per target, the shortest path in cells moved from the nearest of `starts` to the nearest cell from which
    one of its objects (itself or a numbered copy: perception/targets.py) is in sight; None where none is
    reached from any start."""
    goals = {
        target: {
            seen_from
            for name, cell in world.objects.items()
            if is_target_object(name, target)
            for seen_from in sight_cells(world, cell)
        }
        for target in targets
    }
    return walking_distances(world, starts, goals)
