"""corridor: a long east-west corridor, one cell wide, with side rooms behind single-cell doors on
one side or both.

Rooms are 2-5 cells wide and as deep as their side, or shallower (a one-cell-deep
room shows little from the corridor: an agent must stand in its door). `walls`
is how much of each side is solid wall between the rooms rather than rooms. The
team starts at one end of the corridor.
"""

from __future__ import annotations

import random

from perception.families.plan import Cell, Family, FamilyParams, Plan
from perception.families.things import CORRIDOR_OBJECTS, SIDE_ROOM_OBJECTS

SIDES = ("both", "both", "north", "south")  # drawn by the seed: both sides twice as often as either
SOLID_SHARE = 0.6  # at walls=1, the share of a side's stretches left solid
ROOM_WIDTHS = (2, 5)
FULL_DEPTH_SHARE = 0.5  # rooms as deep as their side; the others are 1 cell deep up to that
ROOM_OBJECT_SHARE = 0.8  # the rest are in the corridor


def build(rng: random.Random, params: FamilyParams) -> Plan:
    width, depth = params.width, params.depth
    plan = Plan(width, depth)
    plan.fill((0, 0, width - 1, depth - 1))
    sides = rng.choice(SIDES) if depth >= 5 else rng.choice(SIDES[2:])
    row = {"both": depth // 2, "north": 0, "south": depth - 1}[sides]
    plan.carve((0, row, width - 1, row))
    room_cells: list[Cell] = []
    for side in ("north", "south") if sides == "both" else (sides,):
        room_cells += _side_rooms(rng, plan, row, side, SOLID_SHARE * params.walls)
    count = plan.object_count(len(plan.free_cells()), params.objects)
    in_rooms = round(count * ROOM_OBJECT_SHARE)
    plan.scatter(rng, room_cells, SIDE_ROOM_OBJECTS, in_rooms)
    plan.scatter(rng, plan.free_cells((0, row, width - 1, row)), CORRIDOR_OBJECTS, count - in_rooms)
    plan.start_near((rng.choice((0, width - 1)), row))
    return plan


def _side_rooms(rng: random.Random, plan: Plan, row: int, side: str, solid_share: float) -> list[Cell]:
    """Carve one side's rooms, each behind a door in the corridor's wall; their cells."""
    ahead = 1 if side == "north" else -1
    side_depth = plan.depth - row - 2 if side == "north" else row - 1
    stretches = []
    x = 0
    while plan.width - x >= ROOM_WIDTHS[0]:
        room_width = min(rng.randint(*ROOM_WIDTHS), plan.width - x)
        stretches.append((x, x + room_width - 1))
        x += room_width + 1  # and a wall between rooms
    solid = [rng.random() < solid_share for _ in stretches]
    if stretches and all(solid):
        solid[rng.randrange(len(stretches))] = False
    cells: list[Cell] = []
    for (x0, x1), is_solid in zip(stretches, solid):
        if is_solid:
            continue
        room_depth = side_depth if rng.random() < FULL_DEPTH_SHARE else rng.randint(1, side_depth)
        near, far = row + 2 * ahead, row + (1 + room_depth) * ahead
        rect = (x0, min(near, far), x1, max(near, far))
        plan.carve(rect)
        door = rng.randint(x0, x1)
        plan.carve((door, row + ahead, door, row + ahead))
        cells += plan.free_cells(rect)
    return cells


FAMILY = Family(
    name="corridor",
    summary="a long corridor with side rooms behind single-cell doors, on one side or both",
    defaults=FamilyParams(width=30, depth=9, walls=0.4, objects=0.08),
    min_size=(6, 3),
    build=build,
)
