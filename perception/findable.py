"""Whether a world can be explored to the end: its start poses free, its ground one walkable part,
and every object on it, where a pose sees it.

Movement is over ground columns: a step goes to one of the four neighbouring
cells when it is on the grid and not a wall, and moving up or down stays in the
column (perception/geometry.py), so the columns an agent reaches are a flood
fill of the ground, and every level of them is reached too. An object on a
reached column is seen from there (a pose sees its own cell, at its level);
one off them is seen from nowhere an agent can stand, since the walls that part
the ground leave no gap for sight (walls meeting at a corner block it:
geometry.line_of_sight).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from itertools import filterfalse, product

from perception.world import World

Cell = tuple[int, int]


def ground_parts(width: int, depth: int, walls: Collection[Cell]) -> list[set[Cell]]:
    """The free ground split into the parts an agent can walk between, largest first (ties: the
    part whose first cell comes first); each part's cells in the order a breadth-first walk from its
    first cell meets them."""
    border = [(-1, y) for y in range(depth)] + [(width, y) for y in range(depth)]
    border += [(x, -1) for x in range(width)] + [(x, depth) for x in range(width)]
    taken = {*walls, *border}  # every cell a walk may not enter again, the grid's rim around it too
    unwalked = filterfalse(taken.__contains__, product(range(width), range(depth)))  # asked as each walk ends
    parts = [_flood(start, taken) for start in unwalked]
    return sorted(parts, key=len, reverse=True)


def _flood(start: Cell, taken: set[Cell]) -> set[Cell]:
    """The cells reached from `start` without entering one taken; each is taken as it is reached."""
    taken.add(start)
    reached, queue = {start}, deque([start])
    while queue:
        x, y = queue.popleft()
        for cell in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if cell not in taken:
                taken.add(cell)
                reached.add(cell)
                queue.append(cell)
    return reached


def findability_problems(world: World) -> list[str]:
    """What keeps a team from finding every object, one line each; empty when nothing does.

    The ground must be one part, whatever the start poses: agents past the
    world's start poses are placed on any free cell (perception/mock.py).
    """
    problems = [
        f"agent {number} starts at [{pose.x}, {pose.y}, {pose.z}], which is not a free cell"
        for number, pose in enumerate(world.agent_starts, 1)
        if not world.is_free(pose.x, pose.y, pose.z)
    ]
    parts = ground_parts(world.width, world.depth, world.walls)
    if not parts:
        return [*problems, "the world has no free ground"]
    if len(parts) > 1:
        apart = min(parts[1])
        problems.append(f"the free ground is in {len(parts)} parts: [{apart[0]}, {apart[1]}] cannot be walked to")
    problems.extend(
        f"object '{name}' at {list(cell)} is not seen from any pose an agent can reach"
        for name, cell in world.objects.items()
        if cell[:2] not in parts[0]
    )
    return problems
