"""Grid worlds read from YAML files, and what a pose can see in them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from perception.base import FACINGS, Pose
from perception.geometry import ViewCone
from perception.rooms import Room, grid_cell, read_rooms
from perception.targets import MAX_TARGETS, base_name, listed_names, missing_targets, target_names
from perception.yaml_files import FileProblem, Invalid, check_keys, is_int, kind, load_mapping, named_entry

WORLD_KEYS = ("name", "size", "walls", "objects", "rooms", "agents", "view_distance", "max_steps", "task")
OBJECT_KEYS = ("name", "position", "category")
TASK_KEYS = ("find",)
AGENT_KEYS = ("position", "facing", "pitch", "roll")
DEFAULT_VIEW_DISTANCE = 3
# Limits, so that no world file can take the machine's memory or hours: a world's cells
# (width x depth x height), its objects and its view distance.
MAX_CELLS = 1_000_000
MAX_OBJECTS = 10_000
MAX_VIEW_DISTANCE = 50
SHIPPED_WORLDS = Path(__file__).parent / "worlds"  # installed with the package
DEFAULT_WORLD = SHIPPED_WORLDS / "apartment.yaml"


class WorldError(FileProblem):
    """A world file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class World:
    """A grid of cells x in [0, width), y in [0, depth), z in [0, height).

    Walls are (x, y) columns blocked at every level: they stop movement and sight.
    """

    name: str
    width: int
    depth: int
    height: int
    walls: frozenset
    objects: dict  # name -> (x, y, z), in file order
    agent_starts: tuple = ()
    view_distance: int = DEFAULT_VIEW_DISTANCE
    max_steps: int | None = None
    path: str = ""
    rooms: tuple[Room, ...] = ()  # named areas, in file order; no cell in two
    categories: dict[str, str] = field(default_factory=dict)  # object name -> its kind (bathroom_item), where given
    targets: tuple[str, ...] = ()  # what the task asks the team to find (perception/targets.py); () for none
    starts_by_seed: bool = False  # a generated world: a run's seed places its team (perception/starts.py)

    @cached_property
    def _room_of_cell(self) -> dict[tuple[int, int], Room]:
        return {cell: room for room in self.rooms for cell in room.cells}

    def room_at(self, x: int, y: int) -> Room | None:
        """The room the ground cell (x, y) lies in, or None."""
        return self._room_of_cell.get((x, y))

    @property
    def size(self):
        return (self.width, self.depth, self.height)

    def in_bounds(self, x, y, z=0):
        return 0 <= x < self.width and 0 <= y < self.depth and 0 <= z < self.height

    def is_free(self, x, y, z=0):
        return self.in_bounds(x, y, z) and (x, y) not in self.walls

    @property
    def free_cell_count(self):
        """Cells (x, y, level) not inside a wall: what there is to see."""
        return (self.width * self.depth - len(self.walls)) * self.height

    def free_cells(self):
        """Ground cells that are not walls, sorted."""
        return [(x, y, 0) for x in range(self.width) for y in range(self.depth) if (x, y) not in self.walls]

    @cached_property
    def view_cone(self):
        return ViewCone(self.view_distance)

    def view(self, pose):
        """What `pose` sees: (objects, seen_cells as (x, y, level), seen_walls as (x, y))."""
        cells, walls = self.view_cone.sight(pose, self.size, self.walls)
        seen = set(cells)
        origin = (pose.x, pose.y)
        objects = sorted(
            (name for name, cell in self.objects.items() if cell in seen),
            key=lambda name: (_squared_distance(origin, self.objects[name]), name),
        )
        return tuple(objects), cells, walls


def _squared_distance(origin, cell):
    return (cell[0] - origin[0]) ** 2 + (cell[1] - origin[1]) ** 2


def load_world(path) -> World:
    """Read and check a world file; any problem raises WorldError."""
    return world_from_mapping(load_mapping(path, WorldError, "a world file"), str(path))


def world_from_mapping(data: dict, source: str) -> World:
    """Check a world file's top-level mapping (read from a file, or made by a generator) and build its
    World; any problem raises WorldError naming `source`."""
    try:
        return _build_world(data, source)
    except Invalid as problem:
        raise WorldError(source, problem) from None


def _build_world(data, path):
    check_keys(data, WORLD_KEYS, "world")
    name = data.get("name")
    if name is None:
        raise Invalid("'name' is missing")
    if not isinstance(name, str) or not name.strip():
        raise Invalid(f"'name' must be a non-empty string, got {name!r}")
    width, depth, height = _size(data.get("size"))
    if width * depth * height > MAX_CELLS:
        raise Invalid(f"'size' {width}x{depth}x{height} has more than {MAX_CELLS:,} cells")
    bounds = World(name, width, depth, height, frozenset(), {})
    walls = frozenset(grid_cell(entry, "wall", bounds) for entry in _list(data, "walls"))
    grid = replace(bounds, walls=walls)

    if data.get("objects") is None:
        raise Invalid("'objects' is missing: list at least one object")
    entries = _list(data, "objects")
    if not entries:
        raise Invalid("'objects' must be a non-empty list")
    too_many = too_many_objects(len(entries))
    if too_many:
        raise Invalid(too_many)
    objects, categories = {}, {}
    for entry in entries:
        object_name, cell = _object(grid, entry)
        if object_name in objects:
            raise Invalid(f"object name '{object_name}' is used twice")
        objects[object_name] = cell
        if "category" in entry:
            categories[object_name] = _category(entry["category"], object_name)
    starts = tuple(_agent_start(grid, number, entry) for number, entry in enumerate(_list(data, "agents"), 1))

    return World(
        name=name,
        width=width,
        depth=depth,
        height=height,
        walls=walls,
        objects=objects,
        agent_starts=starts,
        view_distance=_view_distance(data),
        max_steps=_positive_int(data, "max_steps", None),
        path=path,
        rooms=read_rooms(_list(data, "rooms"), grid),
        categories=categories,
        targets=_task(data.get("task"), objects),
    )


def too_many_objects(count: int) -> str | None:
    """Why no world holds `count` objects, or None when one may."""
    return f"{count:,} objects: at most {MAX_OBJECTS:,}" if count > MAX_OBJECTS else None


def with_targets(world: World, targets: tuple[str, ...]) -> World:
    """The world with the task to find `targets` instead of its own (--find); WorldError naming the world
    when one of them is no object in it."""
    try:
        return replace(world, targets=checked_targets(list(targets), world.objects))
    except Invalid as problem:
        raise WorldError(world.path or world.name, problem) from None


def checked_targets(targets: list, objects: dict) -> tuple[str, ...]:
    """The targets, each an object of the world (by name, or a numbered copy's); Invalid otherwise."""
    if len(targets) > MAX_TARGETS:
        raise Invalid(f"{len(targets)} targets to find: at most {MAX_TARGETS}")
    for target in targets:
        if not isinstance(target, str) or not target.strip():
            raise Invalid(f"each target to find must be an object's name, got {target!r}")
    missing = missing_targets(targets, objects)
    if missing:
        held = listed_names(base_name(name) for name in objects)
        raise Invalid(f"unknown target '{missing[0]}': no object of that name in the world (it holds {held})")
    return tuple(dict.fromkeys(targets))


def _task(task: object, objects: dict) -> tuple[str, ...]:
    """The targets of a world file's `task: {find: [...]}`; () without a task."""
    if task is None:
        return ()
    if not isinstance(task, dict):
        raise Invalid(f"'task' must be a mapping such as {{find: [toothbrush, laptop]}}, not a {kind(task)}")
    check_keys(task, TASK_KEYS, "task")
    try:
        targets = target_names(task.get("find"))
    except ValueError as problem:
        raise Invalid(f"task {problem}") from None
    return checked_targets(list(targets), objects)


def _category(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"object '{name}' category must be a non-empty string, got {value!r}")
    return value


def _list(data, key):
    """An optional list; a key left empty counts as absent."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"'{key}' must be a list, not a {kind(value)}")
    return value


def _size(value):
    if value is None:
        raise Invalid("'size' is missing: give [width, depth] or [width, depth, height]")
    if not isinstance(value, list) or len(value) not in (2, 3) or not all(is_int(n) and n > 0 for n in value):
        raise Invalid(f"'size' must be 2 or 3 positive integers, got {value!r}")
    width, depth, *height = value
    return width, depth, height[0] if height else 1


def _positive_int(data, key, default):
    value = data.get(key)
    if value is None:
        return default
    if not is_int(value) or value <= 0:
        raise Invalid(f"'{key}' must be a positive integer, got {value!r}")
    return value


def _view_distance(data):
    value = _positive_int(data, "view_distance", DEFAULT_VIEW_DISTANCE)
    if value > MAX_VIEW_DISTANCE:
        raise Invalid(f"'view_distance' must be at most {MAX_VIEW_DISTANCE}, got {value}")
    return value


def _position(value, what):
    if not isinstance(value, list) or len(value) not in (2, 3) or not all(map(is_int, value)):
        raise Invalid(f"{what} position must be [x, y] or [x, y, z] integers, got {value!r}")
    x, y, *z = value
    return (x, y, z[0] if z else 0)


def _place(grid, value, what):
    """A checked (x, y, z) cell: on the grid and not inside a wall."""
    x, y, z = cell = _position(value, what)
    if not grid.in_bounds(x, y, z):
        raise Invalid(f"{what} at [{x}, {y}, {z}] is off the grid (size {grid.width}x{grid.depth}x{grid.height})")
    if (x, y) in grid.walls:
        raise Invalid(f"{what} at [{x}, {y}, {z}] is inside a wall")
    return cell


def _object(grid, given):
    entry, name = named_entry(given, OBJECT_KEYS, "object", "name and position")
    if "position" not in entry:
        raise Invalid(f"object '{name}' has no position")
    return name, _place(grid, entry["position"], f"object '{name}'")


def _agent_start(grid, number, entry):
    what = f"agent {number}"
    if not isinstance(entry, dict):
        raise Invalid(f"{what} must be a mapping with a position, got {entry!r}")
    check_keys(entry, AGENT_KEYS, "agent")
    if "position" not in entry:
        raise Invalid(f"{what} has no position")
    x, y, z = _place(grid, entry["position"], what)
    facing = entry.get("facing", "north")
    if facing not in FACINGS:
        raise Invalid(f"{what} facing must be one of {', '.join(FACINGS)}, got {facing!r}")
    head = {}
    for angle in ("pitch", "roll"):
        value = entry.get(angle, 0)
        if not is_int(value) or not -1 <= value <= 1:
            raise Invalid(f"{what} {angle} must be -1, 0 or 1, got {value!r}")
        head[angle] = value
    return Pose(x, y, z, facing, **head)
