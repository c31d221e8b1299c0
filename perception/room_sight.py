"""What an agent knows of the rooms (perception/rooms.py) from where it stands: the room it is in, and
the doors in sight that lead out of it, nearest first.

A door is a one-cell gap in a wall: a free cell with walls (or the grid's edge) on two opposite sides
and free ground on the other two, which lie in different rooms, or one in a room and one in none (a
corridor). That is how generated houses and offices cut their doors, and how a world file draws one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from perception.rooms import Cell, Room

MAX_DOORS = 3  # the doors told of, nearest first: enough to choose a way, few enough to read


class RoomMap(Protocol):
    """What of a world the rooms are read from (perception/world.py's World)."""

    @property
    def rooms(self) -> tuple[Room, ...]: ...

    def room_at(self, x: int, y: int) -> Room | None: ...

    def is_free(self, x: int, y: int, z: int = 0) -> bool: ...


@dataclass(frozen=True)
class DoorSight:
    """A door in sight, out of the room the agent is in."""

    cell: Cell
    direction: str  # from the agent's cell, in compass terms: "east", "north-west" (an exact diagonal)...
    leads_to: Room | None  # the room on its far side; None: ground in no room


@dataclass(frozen=True)
class RoomSight:
    """The rooms as an agent at one pose knows them."""

    room: Room | None  # the room it stands in; None: in no room (a corridor, a doorway)
    doorway: tuple[Room | None, Room | None] | None  # when it stands in a door: the two sides it joins
    doors: tuple[DoorSight, ...]  # in sight, leading out of its room, nearest first; at most MAX_DOORS
    in_sight: tuple[Room, ...] = ()  # the other rooms it sees into, by name; at most MAX_DOORS


def room_sight(world: RoomMap, x: int, y: int, seen_cells: Iterable[tuple[int, int, int]]) -> RoomSight | None:
    """What an agent at (x, y) seeing `seen_cells` knows of the rooms; None in a world without rooms."""
    if not world.rooms:
        return None
    here = world.room_at(x, y)
    doors = []
    columns = {(cx, cy) for cx, cy, _ in seen_cells}
    for cell in columns - {(x, y)}:
        sides = door_sides(world, cell)
        if sides is not None and here in sides:
            leads_to = sides[1] if sides[0] is here else sides[0]
            doors.append(DoorSight(cell, compass(cell[0] - x, cell[1] - y), leads_to))
    doors.sort(key=lambda door: ((door.cell[0] - x) ** 2 + (door.cell[1] - y) ** 2, door.cell))
    seen_rooms = {world.room_at(cx, cy) for cx, cy in columns} - {here, None}
    in_sight = tuple(sorted((room for room in seen_rooms if room), key=lambda room: room.name)[:MAX_DOORS])
    return RoomSight(here, door_sides(world, (x, y)), tuple(doors[:MAX_DOORS]), in_sight)


def door_sides(world: RoomMap, cell: Cell) -> tuple[Room | None, Room | None] | None:
    """The two areas the door at `cell` joins (south or west first); None where `cell` is no door."""
    x, y = cell
    if not world.is_free(x, y):
        return None
    for (ax, ay), (bx, by) in (((0, 1), (1, 0)), ((1, 0), (0, 1))):  # across the wall, along it
        across = world.is_free(x - ax, y - ay) and world.is_free(x + ax, y + ay)
        if across and not world.is_free(x - bx, y - by) and not world.is_free(x + bx, y + by):
            sides = (world.room_at(x - ax, y - ay), world.room_at(x + ax, y + ay))
            return sides if sides[0] is not sides[1] else None
    return None


def compass(dx: int, dy: int) -> str:
    """The direction of an offset (north is +y): the axis it runs along most, or both on an exact diagonal."""
    north_south = "north" if dy > 0 else "south"
    east_west = "east" if dx > 0 else "west"
    if abs(dx) == abs(dy):
        return f"{north_south}-{east_west}"
    return east_west if abs(dx) > abs(dy) else north_south
