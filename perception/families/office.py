"""office: east-west corridors joined by one north-south corridor, with a row of rooms along each
side of every corridor: meeting rooms and small rooms (private office, kitchenette, server room,
print room) behind single-cell doors, and open-plan offices of cubicles open to the corridor.

`walls` is the share of enclosed rooms against open offices, and how far the
cubicles' partitions reach. Every room is labelled with its kind; the team
starts where the north-south corridor meets the first corridor.
"""

from __future__ import annotations

import random

from perception.families.plan import Family, FamilyParams, Plan, PlannedRoom, Rect, numbered
from perception.families.things import CORRIDOR_OBJECTS, ROOM_OBJECTS, category_of

ROW_DEPTHS = (3, 5)  # a row of rooms' depth, from its corridor back
MIN_NORTH_DEPTH = 2  # the last corridor's north rooms may be shallower, so that no depth is left unused
ROOM_WIDTHS = (3, 6)
ENCLOSED_SHARE = (0.3, 0.8)  # the share of enclosed rooms at walls=0 and walls=1
MEETING_AREA = 15  # an enclosed room this large is a meeting room
SMALL_KINDS = ("private office", "private office", "kitchenette", "server room", "print room")
CUBICLE_PITCH = 2  # a partition every this many cells along an open office


def build(rng: random.Random, params: FamilyParams) -> Plan:
    width, depth = params.width, params.depth
    plan = Plan(width, depth)
    plan.fill((0, 0, width - 1, depth - 1))
    spine = rng.randint(width // 3, 2 * width // 3)
    plan.carve((spine, 0, spine, depth - 1))
    corridors, rows = _floors(rng, depth)
    for row in corridors:
        plan.carve((0, row, width - 1, row))
    rooms: list[tuple[Rect, str]] = []
    for band, corridor in rows:
        for x0, x1 in ((0, spine - 2), (spine + 2, width - 1)):
            rooms += _row_of_rooms(rng, plan, (x0, band[0], x1, band[1]), corridor, params.walls)
    for (rect, kind), name in zip(rooms, numbered([kind for _, kind in rooms])):
        plan.rooms.append(PlannedRoom(name, kind, rect))
        cells = plan.free_cells(rect)
        count = plan.object_count(len(cells), params.objects)
        plan.scatter(rng, cells, ROOM_OBJECTS[kind], count, category=category_of(kind))
    hall_cells = [cell for row in corridors for cell in plan.free_cells((0, row, width - 1, row))]
    plan.scatter(rng, hall_cells, CORRIDOR_OBJECTS, plan.object_count(len(hall_cells), params.objects))
    plan.start_near((spine, corridors[0]))
    return plan


def _floors(rng: random.Random, depth: int) -> tuple[list[int], list[tuple[tuple[int, int], int]]]:
    """From the south: the corridors' rows, and the rows of rooms as ((first row, last row), their corridor's row).

    Each corridor has a row of rooms on each side where the depth allows, one
    behind a wall on its south; back-to-back rows of rooms have a wall between them.
    """
    corridors: list[int] = []
    rows: list[tuple[tuple[int, int], int]] = []
    y = 0
    while depth - y >= ROW_DEPTHS[0] + 2:
        room_depth = min(rng.randint(*ROW_DEPTHS), depth - y - 2)
        corridor = y + room_depth + 1  # rooms, their wall, the corridor
        corridors.append(corridor)
        rows.append(((y, y + room_depth - 1), corridor))
        north = min(rng.randint(*ROW_DEPTHS), depth - corridor - 2)
        if north < MIN_NORTH_DEPTH:
            break
        rows.append(((corridor + 2, corridor + 1 + north), corridor))
        y = corridor + north + 3  # and the wall behind them
    return corridors, rows


def _row_of_rooms(rng: random.Random, plan: Plan, stretch: Rect, corridor: int, walls: float) -> list[tuple[Rect, str]]:
    """Carve a row of rooms along a stretch of corridor, a wall between each two: their (rect, kind)."""
    x0, y0, x1, y1 = stretch
    wall_row = y1 + 1 if y1 < corridor else y0 - 1
    rooms = []
    x = x0
    while x1 - x + 1 >= ROOM_WIDTHS[0]:
        room_width = min(rng.randint(*ROOM_WIDTHS), x1 - x + 1)
        if x1 - (x + room_width) < ROOM_WIDTHS[0]:  # too little left for a room: this one takes it
            room_width = x1 - x + 1
        rect = (x, y0, x + room_width - 1, y1)
        enclosed = rng.random() < ENCLOSED_SHARE[0] + (ENCLOSED_SHARE[1] - ENCLOSED_SHARE[0]) * walls
        rooms.append(_enclosed(rng, plan, rect, wall_row) if enclosed else _open_office(plan, rect, wall_row, walls))
        x += room_width + 1
    return rooms


def _enclosed(rng: random.Random, plan: Plan, rect: Rect, wall_row: int) -> tuple[Rect, str]:
    plan.carve(rect)
    door = rng.randint(rect[0], rect[2])
    plan.carve((door, wall_row, door, wall_row))
    area = (rect[2] - rect[0] + 1) * (rect[3] - rect[1] + 1)
    return rect, "meeting room" if area >= MEETING_AREA else rng.choice(SMALL_KINDS)


def _open_office(plan: Plan, rect: Rect, wall_row: int, walls: float) -> tuple[Rect, str]:
    """Open to the corridor along its length, with cubicle partitions from its back wall, leaving at
    least the row by the corridor clear."""
    x0, y0, x1, y1 = rect
    office = (x0, min(y0, wall_row), x1, max(y1, wall_row))
    plan.carve(office)
    room_depth = y1 - y0 + 1
    reach = min(room_depth - 1, round(walls * room_depth))
    back = y0 if wall_row > y1 else y1
    toward = 1 if back == y0 else -1
    for x in range(x0 + CUBICLE_PITCH, x1 - 1, CUBICLE_PITCH):
        if reach:
            plan.fill((x, back, x, back + toward * (reach - 1)))
    return office, "open office"


FAMILY = Family(
    name="office",
    summary="cubicles and meeting rooms off corridors, each room labelled with its kind",
    defaults=FamilyParams(width=30, depth=20, walls=0.5, objects=0.05),
    min_size=(12, 5),
    build=build,
)
