"""hall: one open space cluttered with furniture-sized blocks (1 to 3 cells by 1 to 2), entered from
the middle of its south side, where the team starts.

`walls` is how much of the floor the clutter covers (at most a quarter);
clutter that would shut a pocket off is opened again.
"""

from __future__ import annotations

import random

from perception.families.plan import Family, FamilyParams, Plan
from perception.families.things import HALL_OBJECTS

CLUTTER_SHARE = 0.25  # of the floor, at walls=1
BLOCK_SIDES = ((1, 3), (1, 2))
TRIES_PER_BLOCK = 4


def build(rng: random.Random, params: FamilyParams) -> Plan:
    width, depth = params.width, params.depth
    plan = Plan(width, depth)
    entrance = (width // 2, 0)
    target = round(CLUTTER_SHARE * params.walls * width * depth)
    for _ in range(target * TRIES_PER_BLOCK):
        if len(plan.walls) >= target:
            break
        long_side, short_side = rng.randint(*BLOCK_SIDES[0]), rng.randint(*BLOCK_SIDES[1])
        block_width, block_depth = (long_side, short_side) if rng.random() < 0.5 else (short_side, long_side)
        x, y = rng.randrange(width - block_width + 1), rng.randrange(depth - block_depth + 1)
        plan.fill((x, y, x + block_width - 1, y + block_depth - 1))
    plan.walls.discard(entrance)
    plan.connect()
    plan.scatter(rng, plan.free_cells(), HALL_OBJECTS, plan.object_count(len(plan.free_cells()), params.objects))
    plan.start_near(entrance)
    return plan


FAMILY = Family(
    name="hall",
    summary="one open space with clutter",
    defaults=FamilyParams(width=24, depth=16, walls=0.4, objects=0.03),
    min_size=(3, 3),
    build=build,
)
