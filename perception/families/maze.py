"""maze: one-cell passages between one-cell walls, carved by a randomised depth-first search from the
south-west corner, where the team starts.

`walls` is how perfect the maze is: at 1 every two places have one way
between them; lower, some dead ends are opened into a neighbouring passage,
making loops. Half the objects sit at dead ends.
"""

from __future__ import annotations

import random
from itertools import product

from perception.families.plan import Cell, Family, FamilyParams, Plan
from perception.families.things import MAZE_OBJECTS

LOOPS = 0.6  # at walls=0, the chance a dead end is opened into a loop
DEAD_END_OBJECTS = 0.5
STEPS = ((2, 0), (-2, 0), (0, 2), (0, -2))  # from a junction to the next: passages are at even cells


def build(rng: random.Random, params: FamilyParams) -> Plan:
    plan = Plan(params.width, params.depth)
    plan.fill((0, 0, params.width - 1, params.depth - 1))
    _carve_passages(rng, plan)
    ends = _dead_ends(plan)
    for x, y in ends:
        if rng.random() < LOOPS * (1 - params.walls):
            closed = [(x + dx, y + dy) for dx, dy in STEPS if _junction(plan, (x + dx, y + dy))]
            closed = [near for near in closed if ((x + near[0]) // 2, (y + near[1]) // 2) in plan.walls]
            if closed:
                near = rng.choice(closed)
                middle = ((x + near[0]) // 2, (y + near[1]) // 2)
                plan.carve((*middle, *middle))
    count = plan.object_count(len(plan.free_cells()), params.objects)
    at_ends = [end for end in _dead_ends(plan) if end != (0, 0)]
    plan.scatter(rng, at_ends, MAZE_OBJECTS, round(count * DEAD_END_OBJECTS))
    plan.scatter(rng, plan.free_cells(), MAZE_OBJECTS, count - len(plan.objects))
    plan.start_near((0, 0))
    return plan


def _junction(plan: Plan, cell: Cell) -> bool:
    return cell[0] % 2 == 0 and cell[1] % 2 == 0 and 0 <= cell[0] < plan.width and 0 <= cell[1] < plan.depth


def _carve_passages(rng: random.Random, plan: Plan) -> None:
    """Depth-first search over the junctions (even cells), carving each junction and the wall to it."""
    plan.carve((0, 0, 0, 0))
    unvisited = set(product(range(0, plan.width, 2), range(0, plan.depth, 2))) - {(0, 0)}
    stack = [(0, 0)]
    while stack:
        x, y = stack[-1]
        ahead = [near for near in ((x + 2, y), (x - 2, y), (x, y + 2), (x, y - 2)) if near in unvisited]  # STEPS
        if not ahead:
            stack.pop()
            continue
        near = rng.choice(ahead)
        plan.walls -= {((x + near[0]) // 2, (y + near[1]) // 2), near}
        unvisited.discard(near)
        stack.append(near)


def _dead_ends(plan: Plan) -> list[Cell]:
    """Free cells with one free neighbour, in order."""
    cells = plan.free_cells()
    free = set(cells)
    return [
        (x, y)
        for x, y in cells
        if ((x + 1, y) in free) + ((x - 1, y) in free) + ((x, y + 1) in free) + ((x, y - 1) in free) == 1
    ]


FAMILY = Family(
    name="maze",
    summary="a maze of one-cell passages; fewer walls open loops into it",
    defaults=FamilyParams(width=21, depth=15, walls=0.6, objects=0.05),
    min_size=(5, 5),
    build=build,
)
