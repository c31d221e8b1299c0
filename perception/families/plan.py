"""A world under construction, what every family's generator fills in, and the world-file mapping it
becomes: the same mapping a YAML world file gives, so a generated world is checked as a file is."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import filterfalse, product, starmap
from operator import add
from typing import TypedDict

from perception.base import FACINGS
from perception.families.repair import SetOrder, fewest_walls_way
from perception.findable import ground_parts
from perception.geometry import nearest_by_walking, open_run
from perception.world import DEFAULT_VIEW_DISTANCE

Cell = tuple[int, int]
Rect = tuple[int, int, int, int]  # x0, y0, x1, y1: opposite corners, both inside
START_POSES = 4  # a run's agents past these are placed by the run's seed
STEPS_PER_CELL = 1 / 3  # the step budget a world gets: a third of a step per free cell, at least MIN_STEPS
MIN_STEPS = 60


class _WorldTask(TypedDict, total=False):
    task: dict[str, list[str]]  # {find: [targets]}, where the world's name gives some


class WorldMapping(_WorldTask):
    """A world file's top-level mapping, as YAML would give it, every key there but `task` (perception/world.py
    checks it)."""

    name: str
    size: list[int]
    walls: list[list[int]]
    objects: list[dict]
    rooms: list[dict]
    agents: list[dict]
    view_distance: int
    max_steps: int


@dataclass(frozen=True)
class FamilyParams:
    """What a family's worlds vary in besides the seed."""

    width: int
    depth: int
    walls: float  # 0..1: how much of the family's wall structure there is (each family says what)
    objects: float  # objects per free cell, counting every level
    view_distance: int = DEFAULT_VIEW_DISTANCE
    levels: int = 1
    find: tuple[str, ...] = ()  # the task's targets, placed by the kind of room (families/placement.py)


@dataclass(frozen=True)
class Family:
    name: str
    summary: str  # one line, for a list of the families
    defaults: FamilyParams
    min_size: tuple[int, int]
    build: Callable[[random.Random, FamilyParams], Plan]
    has_levels: bool = False


@dataclass(frozen=True)
class PlannedRoom:
    name: str
    kind: str
    rect: Rect


@dataclass
class Plan:
    """The grid a generator carves: walls, objects, rooms and start poses, all mutable until mapped."""

    width: int
    depth: int
    levels: int = 1
    walls: set[Cell] = field(default_factory=set)
    objects: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    occupied: set[tuple[int, int, int]] = field(default_factory=set)  # the places the objects hold
    rooms: list[PlannedRoom] = field(default_factory=list)
    starts: list[tuple[Cell, str]] = field(default_factory=list)  # (cell, facing)
    name_uses: Counter[str] = field(default_factory=Counter)  # objects named from each base name so far
    categories: dict[str, str] = field(default_factory=dict)  # object name -> its kind (bathroom_item)
    targets: tuple[str, ...] = ()  # what the world's task asks to find

    def fill(self, rect: Rect) -> None:
        self.walls.update(cells_of(rect))

    def carve(self, rect: Rect) -> None:
        self.walls.difference_update(cells_of(rect))

    def is_free(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.depth and cell not in self.walls

    def free_cells(self, rect: Rect | None = None) -> list[Cell]:
        """The free cells of `rect` (the whole grid when None), in order."""
        return list(filterfalse(self.walls.__contains__, cells_of(rect or self.grid)))

    @property
    def grid(self) -> Rect:
        """The whole grid, as a rect."""
        return (0, 0, self.width - 1, self.depth - 1)

    def object_count(self, cells: int, density: float) -> int:
        """How many objects `cells` free ground cells hold at `density` per cell of every level: at least one."""
        return max(1, round(density * cells * self.levels))

    def scatter(
        self,
        rng: random.Random,
        cells: Sequence[Cell],
        names: Sequence[str],
        count: int,
        levels: Sequence[int] = (0,),
        category: str | None = None,
    ) -> None:
        """Put `count` objects, named from `names` in a shuffled cycle, on distinct cells of `cells` at
        one of `levels` each (fewer when the places run out), each of `category` where given."""
        every = starmap(add, product(cells, [(z,) for z in levels]))  # (x, y, z): each cell at each level in turn
        places = list(filterfalse(self.occupied.__contains__, every))
        chosen = rng.sample(places, min(count, len(places)))
        order = list(names)
        rng.shuffle(order)
        for index, place in enumerate(chosen):
            self.add_object(order[index % len(order)], place, category)

    def add_object(self, base: str, place: tuple[int, int, int], category: str | None = None) -> None:
        """An object named `base`, or `base_2`, `base_3`... when that is taken; of `category` where given."""
        self.name_uses[base] += 1
        name = base if self.name_uses[base] == 1 else f"{base}_{self.name_uses[base]}"
        while name in self.objects:  # only if a base name itself ends in a number
            self.name_uses[base] += 1
            name = f"{base}_{self.name_uses[base]}"
        self.objects[name] = place
        self.occupied.add(place)
        if category:
            self.categories[name] = category

    def keep_objects(self, kept: Callable[[str], bool]) -> None:
        """Take away the objects whose names are not `kept`, with their categories."""
        self.objects = {name: place for name, place in self.objects.items() if kept(name)}
        self.categories = {name: kind for name, kind in self.categories.items() if name in self.objects}
        self.occupied = set(self.objects.values())

    def start_near(self, *anchors: Cell, count: int = START_POSES) -> None:
        """`count` start poses on the free cells nearest the anchors by walking, taking the anchors in
        turn (the first agent at the first anchor, the second at the second...), each facing its
        longest open view."""
        near = [nearest_free(self, anchor, count) for anchor in anchors]
        taken: list[Cell] = []
        for rank in range(count):
            for cells in near:
                if rank < len(cells) and cells[rank] not in taken:
                    taken.append(cells[rank])
        for start in taken[:count]:
            self.starts.append((start, max(FACINGS, key=lambda facing: self.open_run(start, facing))))

    def open_run(self, cell: Cell, facing: str) -> int:
        return open_run(cell, facing, self.is_free)

    def connect(self) -> None:
        """Repair: join every part of the free ground to the largest through the fewest walls."""
        parts = ground_parts(self.width, self.depth, self.walls)
        joined = set(parts[0]) if parts else set()
        order = SetOrder(joined)  # the ways follow its order: `joined` must grow as it always has
        for part in parts[1:]:
            if not part <= joined:  # a way carved earlier may have joined it already
                way = fewest_walls_way((self.width, self.depth), self.walls, order, part)
                self.walls.difference_update(way)
                joined |= part | set(way)
                order.grew(part)
                order.grew(way)

    def to_mapping(self, name: str, view_distance: int) -> WorldMapping:
        free = self.width * self.depth - len(self.walls)
        mapping: WorldMapping = {
            "name": name,
            "size": [self.width, self.depth, self.levels],
            "walls": list(map(list, filter(self.walls.__contains__, cells_of(self.grid)))),  # sorted: all on the grid
            "objects": [self._object_entry(key, place) for key, place in self.objects.items()],
            "rooms": [
                {"name": r.name, "kind": r.kind, "rect": [list(r.rect[:2]), list(r.rect[2:])]} for r in self.rooms
            ],
            "agents": [{"position": list(cell), "facing": facing} for cell, facing in self.starts],
            "view_distance": view_distance,
            "max_steps": max(MIN_STEPS, math.ceil(free * self.levels * STEPS_PER_CELL)),
        }
        if self.targets:
            mapping["task"] = {"find": list(self.targets)}
        return mapping

    def _object_entry(self, name: str, place: tuple[int, int, int]) -> dict:
        entry: dict = {"name": name, "position": list(place)}
        if name in self.categories:
            entry["category"] = self.categories[name]
        return entry


def numbered(kinds: Sequence[str]) -> list[str]:
    """Names for rooms of these kinds, in order: the kind itself, numbered when it comes more than once."""
    total, seen = Counter(kinds), Counter[str]()
    names = []
    for kind in kinds:
        seen[kind] += 1
        names.append(f"{kind} {seen[kind]}" if total[kind] > 1 else kind)
    return names


def cells_of(rect: Rect) -> list[Cell]:
    """The cells of `rect`, column by column from the west, each from the south."""
    x0, y0, x1, y1 = rect
    return list(product(range(min(x0, x1), max(x0, x1) + 1), range(min(y0, y1), max(y0, y1) + 1)))


def nearest_free(plan: Plan, cell: Cell, count: int) -> list[Cell]:
    """Up to `count` free cells, nearest `cell` by walking (breadth first, from the free cell nearest it)."""
    start = _nearest_free_cell(plan, cell)
    if start is None:
        return []
    return nearest_by_walking(start, count, plan.is_free)


def _nearest_free_cell(plan: Plan, cell: Cell) -> Cell | None:
    """The free cell fewest steps from `cell` as if there were no walls (the first in order of those), found
    ring by ring; None on a grid with no free cell."""
    x, y = cell
    farthest = max(abs(x), abs(x - plan.width + 1)) + max(abs(y), abs(y - plan.depth + 1))
    for steps in range(farthest + 1):
        ring = [
            (near_x, y + sign * (steps - abs(near_x - x)))
            for near_x in range(x - steps, x + steps + 1)
            for sign in (1, -1)
        ]
        free = [near for near in ring if plan.is_free(near)]
        if free:
            return min(free)
    return None
