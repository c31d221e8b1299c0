"""house: rooms of a few sizes, each named by its kind (living room, kitchen, bedroom, bathroom...),
joined by single-cell doors.

The plan is split in two by a wall with one door, and each part again, until
the rooms are no larger than the walls parameter allows (more walls: smaller
rooms); some walls get a second door, fewer as `walls` grows. The largest room
is the living room, where the team starts, then the kitchen; the smallest are
bathrooms, long narrow ones hallways. Each room holds objects of its kind.
"""

from __future__ import annotations

import random

from perception.families.plan import Cell, Family, FamilyParams, Plan, PlannedRoom, Rect, cells_of, numbered
from perception.families.things import ROOM_OBJECTS, category_of

MIN_SIDE = 2  # a room's narrowest inside
LARGEST_ROOM = (64, 16)  # the largest room's area at walls=0 and at walls=1
SMALLER_SPLIT = 0.3  # chance that a room over half the largest is split all the same: a few sizes
SECOND_DOOR = 0.5  # at walls=0, the chance a wall between rooms gets a second door
FIRST_KINDS = ("living room", "kitchen")  # the two largest rooms
LATER_KINDS = ("bedroom", "office", "bedroom", "dining room", "bedroom", "laundry")  # once each, in this order
MORE_KINDS = ("bedroom", "office")  # then these, in turn
ROOMS_PER_BATHROOM = 5


def build(rng: random.Random, params: FamilyParams) -> Plan:
    plan = Plan(params.width, params.depth)
    largest = round(LARGEST_ROOM[0] - (LARGEST_ROOM[0] - LARGEST_ROOM[1]) * params.walls)
    rooms, dividers = _split_all(rng, plan, largest)
    _second_doors(rng, plan, dividers, SECOND_DOOR * (1 - params.walls))
    kinds = _kinds(rooms)
    for rect, kind, name in zip(rooms, kinds, numbered(kinds)):
        plan.rooms.append(PlannedRoom(name, kind, rect))
        cells = plan.free_cells(rect)
        count = plan.object_count(len(cells), params.objects)
        plan.scatter(rng, cells, ROOM_OBJECTS[kind], count, category=category_of(kind))
    living = rooms[kinds.index("living room")] if "living room" in kinds else rooms[0]
    plan.start_near(((living[0] + living[2]) // 2, (living[1] + living[3]) // 2))
    return plan


def _split_all(rng: random.Random, plan: Plan, largest: int) -> tuple[list[Rect], list[Rect]]:
    """Split the plan into rooms, walls between them with a door each: (rooms, walls between them)."""
    rooms: list[Rect] = []
    dividers: list[Rect] = []
    doors: set[Cell] = set()
    pending = [(0, 0, plan.width - 1, plan.depth - 1)]
    while pending:
        rect = pending.pop()
        split = _split(rng, rect, largest, doors)
        if split is None:
            rooms.append(rect)
            continue
        first, divider, second, door = split
        plan.fill(divider)
        plan.carve((*door, *door))
        doors.add(door)
        dividers.append(divider)
        pending += [second, first]
    return sorted(rooms, key=lambda rect: (rect[1], rect[0])), dividers


def _split(rng: random.Random, rect: Rect, largest: int, doors: set[Cell]) -> tuple[Rect, Rect, Rect, Cell] | None:
    """(one part, the wall, the other part, its door), across the longer side where it can be; None to
    keep `rect` one room. A wall never ends against a door, which it would block."""
    x0, y0, x1, y1 = rect
    width, depth = x1 - x0 + 1, y1 - y0 + 1
    area = width * depth
    if area <= largest and not (2 * area > largest and rng.random() < SMALLER_SPLIT):
        return None
    across_x = width > depth or (width == depth and rng.random() < 0.5)
    for vertical in (across_x, not across_x):
        low, high = (x0, x1) if vertical else (y0, y1)
        ends = (y0 - 1, y1 + 1) if vertical else (x0 - 1, x1 + 1)
        places = [
            at
            for at in range(low + MIN_SIDE, high - MIN_SIDE + 1)
            if not any(((at, end) if vertical else (end, at)) in doors for end in ends)
        ]
        if not places:
            continue
        middle = (low + high) / 2
        at = rng.choice(sorted(places, key=lambda place: abs(place - middle))[: max(1, len(places) // 2)])
        if vertical:
            door = (at, rng.randint(y0, y1))
            return (x0, y0, at - 1, y1), (at, y0, at, y1), (at + 1, y0, x1, y1), door
        door = (rng.randint(x0, x1), at)
        return (x0, y0, x1, at - 1), (x0, at, x1, at), (x0, at + 1, x1, y1), door
    return None


def _second_doors(rng: random.Random, plan: Plan, dividers: list[Rect], chance: float) -> None:
    """A second door in some walls, where it joins two free cells across the wall and no door is beside it."""
    for divider in dividers:
        if rng.random() >= chance:
            continue
        vertical = divider[0] == divider[2]
        (ax, ay), (lx, ly) = ((1, 0), (0, 1)) if vertical else ((0, 1), (1, 0))  # across the wall, along it
        places = [
            (x, y)
            for x, y in cells_of(divider)
            if (x, y) in plan.walls
            and plan.is_free((x + ax, y + ay))
            and plan.is_free((x - ax, y - ay))
            and not plan.is_free((x + lx, y + ly))
            and not plan.is_free((x - lx, y - ly))
        ]
        if places:
            door = rng.choice(places)
            plan.carve((*door, *door))


def _kinds(rooms: list[Rect]) -> list[str]:
    """Each room's kind, by size: the largest the living room, then the kitchen; the smallest bathrooms;
    long narrow ones hallways; the rest bedrooms, offices, a dining room..."""
    by_size = sorted(range(len(rooms)), key=lambda index: (-_area(rooms[index]), index))
    bathrooms = max(1, len(rooms) // ROOMS_PER_BATHROOM) if len(rooms) >= 3 else 0
    kinds = dict.fromkeys(by_size[len(rooms) - bathrooms :], "bathroom")
    rank = 0
    for index in by_size[: len(rooms) - bathrooms]:
        if rank >= len(FIRST_KINDS) and _narrow(rooms[index]):
            kinds[index] = "hallway"
            continue
        kinds[index] = _kind_by_rank(rank)
        rank += 1
    return [kinds[index] for index in range(len(rooms))]


def _kind_by_rank(rank: int) -> str:
    kinds = FIRST_KINDS + LATER_KINDS
    return kinds[rank] if rank < len(kinds) else MORE_KINDS[(rank - len(kinds)) % len(MORE_KINDS)]


def _area(rect: Rect) -> int:
    return (rect[2] - rect[0] + 1) * (rect[3] - rect[1] + 1)


def _narrow(rect: Rect) -> bool:
    sides = sorted((rect[2] - rect[0] + 1, rect[3] - rect[1] + 1))
    return sides[0] <= MIN_SIDE and sides[1] >= 3 * MIN_SIDE


FAMILY = Family(
    name="house",
    summary="rooms of a few sizes joined by doors, each named by its kind (kitchen, bedroom, bathroom...)",
    defaults=FamilyParams(width=24, depth=16, walls=0.5, objects=0.06),
    min_size=(7, 7),
    build=build,
)
