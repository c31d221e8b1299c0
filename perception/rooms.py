"""Room labels in world files: named areas of the ground, each a rectangle or a set of cells.

In a world file, `rooms:` is an optional list such as

    rooms:
      - {name: kitchen, rect: [[7, 0], [11, 4]]}      # opposite corners, both inside the room
      - {name: bedroom 2, kind: bedroom, cells: [[1, 6], [2, 6], [1, 7]]}

`kind` says what the room is (kitchen, bathroom, meeting room...), and is the
name when not given. A cell belongs to at most one room, so "the room you are
in" has one answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from perception.yaml_files import Invalid, is_int, named_entry

ROOM_KEYS = ("name", "kind", "rect", "cells")
MAX_ROOMS = 10_000

Cell = tuple[int, int]


@dataclass(frozen=True)
class Room:
    name: str
    kind: str
    cells: frozenset[Cell]


class Bounds(Protocol):
    @property
    def width(self) -> int: ...
    @property
    def depth(self) -> int: ...

    def in_bounds(self, x: int, y: int, z: int = 0) -> bool: ...


def read_rooms(entries: list, grid: Bounds) -> tuple[Room, ...]:
    """Check the entries of a world file's `rooms:` list against the grid; any problem raises Invalid."""
    if len(entries) > MAX_ROOMS:
        raise Invalid(f"{len(entries):,} rooms: at most {MAX_ROOMS:,}")
    rooms: dict[str, Room] = {}
    owner: dict[Cell, str] = {}  # grows at most to the grid's area before an overlap stops it
    for entry in entries:
        name, kind = _name_and_kind(entry)
        if name in rooms:
            raise Invalid(f"room name '{name}' is used twice")
        cells = []
        for cell in _cells(entry, name, grid):
            if cell in owner:
                raise Invalid(_overlap(owner[cell], name, cell))
            owner[cell] = name
            cells.append(cell)
        rooms[name] = Room(name, kind, frozenset(cells))
    return tuple(rooms.values())


def _overlap(first: str, second: str, cell: Cell) -> str:
    where = f"the cell [{cell[0]}, {cell[1]}]"
    return f"room '{first}' gives {where} twice" if first == second else f"rooms '{first}' and '{second}' share {where}"


def _name_and_kind(given: object) -> tuple[str, str]:
    entry, name = named_entry(given, ROOM_KEYS, "room", "a name and a rect or cells")
    kind = entry.get("kind", name)
    if not isinstance(kind, str) or not kind.strip():
        raise Invalid(f"room '{name}' kind must be a non-empty string, got {kind!r}")
    return name, kind


def _cells(entry: dict, name: str, grid: Bounds) -> Iterator[Cell]:
    """The room's cells, each checked to be on the grid."""
    if ("rect" in entry) == ("cells" in entry):
        raise Invalid(f"room '{name}' needs either a rect or cells (one of them)")
    if "rect" in entry:
        rect = entry["rect"]
        if not isinstance(rect, list) or len(rect) != 2:
            raise Invalid(f"room '{name}' rect must be two opposite corners [[x0, y0], [x1, y1]], got {rect!r}")
        (x0, y0), (x1, y1) = (grid_cell(corner, f"room '{name}' corner", grid) for corner in rect)
        for x in range(min(x0, x1), max(x0, x1) + 1):
            for y in range(min(y0, y1), max(y0, y1) + 1):
                yield (x, y)
        return
    cells = entry["cells"]
    if not isinstance(cells, list) or not cells:
        raise Invalid(f"room '{name}' cells must be a non-empty list of [x, y] pairs, got {cells!r}")
    for cell in cells:
        yield grid_cell(cell, f"room '{name}' cell", grid)


def grid_cell(value: object, what: str, grid: Bounds) -> Cell:
    """An [x, y] pair from a world file, checked to be on the grid; `what` names it in the error."""
    if not isinstance(value, list) or len(value) != 2 or not all(map(is_int, value)):
        raise Invalid(f"{what} must be an [x, y] pair of integers, got {value!r}")
    x, y = value
    if not grid.in_bounds(x, y):
        raise Invalid(f"{what} at [{x}, {y}] is off the grid (size {grid.width}x{grid.depth})")
    return (x, y)
