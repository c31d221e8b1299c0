"""warehouse: rows of full-height shelving running north-south, aisles between them, an open loading
area along the south side and a cross-aisle along the north; the shelves have levels.

Objects lie on the floor or on the shelves, at a level above the floor beside
a shelf: an agent must look or climb up to see them. `walls` narrows the aisles
and closes the gaps through the shelving. The team starts at the loading
area's two corners.
"""

from __future__ import annotations

import random

from perception.families.plan import Cell, Family, FamilyParams, Plan, Rect
from perception.families.things import FLOOR_OBJECTS, SHELF_OBJECTS

LOADING_ROWS = 2  # free rows along the south side
SHELF_DEPTHS = (1, 1, 2)  # single shelving twice as often as back-to-back
GAP_SPACING = (5, 9)  # rows between gaps through a shelving row
GAPS = 0.7  # at walls=0, the chance each gap is there
SHELF_OBJECT_SHARE = 0.7  # of the objects, where there are levels above the floor


def build(rng: random.Random, params: FamilyParams) -> Plan:
    width, depth = params.width, params.depth
    plan = Plan(width, depth, levels=params.levels)
    x = 0
    while True:
        x += 1 if rng.random() < params.walls else 2  # the aisle
        shelf_depth = rng.choice(SHELF_DEPTHS)
        if x + shelf_depth >= width:
            break
        _shelving(rng, plan, (x, LOADING_ROWS, x + shelf_depth - 1, depth - 2), GAPS * (1 - params.walls))
        x += shelf_depth
    count = plan.object_count(len(plan.free_cells()), params.objects)
    shelf_levels = list(range(1, params.levels))
    on_shelves = round(count * SHELF_OBJECT_SHARE) if shelf_levels else 0
    plan.scatter(rng, _beside_shelves(plan), SHELF_OBJECTS, on_shelves, levels=shelf_levels)
    plan.scatter(rng, plan.free_cells(), FLOOR_OBJECTS, count - len(plan.objects))
    plan.start_near((0, 0), (width - 1, 0))
    return plan


def _shelving(rng: random.Random, plan: Plan, rect: Rect, gap_chance: float) -> None:
    """A row of shelving, with gaps through it now and then."""
    plan.fill(rect)
    x0, y0, x1, y1 = rect
    y = y0 + rng.randint(*GAP_SPACING)
    while y < y1:
        if rng.random() < gap_chance:
            plan.carve((x0, y, x1, y))
        y += rng.randint(*GAP_SPACING)


def _beside_shelves(plan: Plan) -> list[Cell]:
    """Free cells with shelving east or west of them: where a shelf's goods are."""
    return [(x, y) for x, y in plan.free_cells() if (x - 1, y) in plan.walls or (x + 1, y) in plan.walls]


FAMILY = Family(
    name="warehouse",
    summary="aisles between rows of shelving, with objects on the floor and up on the shelves' levels",
    defaults=FamilyParams(width=24, depth=16, walls=0.5, objects=0.03, levels=3),
    min_size=(5, 5),
    build=build,
    has_levels=True,
)
