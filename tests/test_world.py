"""Loading and checking world files."""

from collections import deque

import pytest

from perception.base import Pose
from perception.geometry import line_of_sight
from perception.world import World, WorldError, load_world
from tests.support.paths import WORLDS

SHIPPED_WORLDS = sorted(WORLDS.glob("*.yaml"))

VALID = """\
name: test
size: [8, 6]
walls: [[3, 0], [3, 1]]
objects:
  - {name: keyboard, position: [5, 0]}
"""


def write(tmp_path, text, name="world.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def load_error(path):
    with pytest.raises(WorldError) as caught:
        load_world(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    return message


def with_lines(*lines):
    return VALID + "".join(line + "\n" for line in lines)


MALFORMED = {
    "bad yaml": ("name: test\nsize: [8, 6\nobjects: []\n", "invalid YAML at line"),
    "tab indentation": ("name: test\nsize:\n\t- 8\n", "invalid YAML at line 3"),
    "python tag": ("name: !!python/object:os.system test\n", "invalid YAML"),
    "empty file": ("", "empty"),
    "only comments": ("# nothing here\n", "empty"),
    "not a mapping": ("- name: test\n", "top level must be a mapping"),
    "scalar top level": ("just words\n", "top level must be a mapping"),
    "unknown key": (with_lines("colour: red"), "unknown world key 'colour'"),
    "missing name": (VALID.replace("name: test\n", ""), "'name' is missing"),
    "numeric name": (VALID.replace("name: test", "name: 42"), "'name' must be a non-empty string"),
    "missing size": (VALID.replace("size: [8, 6]\n", ""), "'size' is missing"),
    "size one number": (VALID.replace("[8, 6]", "[8]"), "'size' must be 2 or 3 positive"),
    "size four numbers": (VALID.replace("[8, 6]", "[8, 6, 1, 1]"), "'size' must be 2 or 3"),
    "size zero": (VALID.replace("[8, 6]", "[8, 0]"), "'size' must be 2 or 3 positive"),
    "size negative": (VALID.replace("[8, 6]", "[8, -6]"), "'size' must be 2 or 3 positive"),
    "size string": (VALID.replace("[8, 6]", "8x6"), "'size' must be 2 or 3 positive"),
    "size float": (VALID.replace("[8, 6]", "[8.5, 6]"), "'size' must be 2 or 3 positive"),
    "size boolean": (VALID.replace("[8, 6]", "[yes, 6]"), "'size' must be 2 or 3 positive"),
    "walls not a list": (VALID.replace("[[3, 0], [3, 1]]", "3"), "'walls' must be a list"),
    "wall not a pair": (VALID.replace("[[3, 0], [3, 1]]", "[[3, 0, 1]]"), "[x, y] pair"),
    "wall float": (VALID.replace("[[3, 0], [3, 1]]", "[[3.0, 1]]"), "[x, y] pair"),
    "wall off grid": (VALID.replace("[3, 1]]", "[8, 1]]"), "wall at [8, 1] is off the grid"),
    "objects missing": (VALID.split("objects:")[0], "'objects' is missing"),
    "objects empty": (VALID.split("objects:")[0] + "objects: []\n", "non-empty list"),
    "objects not a list": (VALID.split("objects:")[0] + "objects: {a: 1}\n", "must be a list"),
    "object not a mapping": (with_lines("  - lamp"), "must be a mapping"),
    "object without name": (with_lines("  - {position: [1, 1]}"), "object without a name"),
    "object without position": (with_lines("  - {name: lamp}"), "object 'lamp' has no position"),
    "object numeric name": (with_lines("  - {name: 7, position: [1, 1]}"), "must be a non-empty string"),
    "object unknown key": (
        with_lines("  - {name: lamp, position: [1, 1], colour: red}"),
        "unknown object key 'colour'",
    ),
    "duplicate names": (
        with_lines("  - {name: keyboard, position: [1, 1]}"),
        "object name 'keyboard' is used twice",
    ),
    "position one number": (with_lines("  - {name: lamp, position: [1]}"), "lamp' position must be"),
    "position float": (with_lines("  - {name: lamp, position: [1.5, 1]}"), "lamp' position must be"),
    "position string": (with_lines("  - {name: lamp, position: '1, 1'}"), "lamp' position must be"),
    "position boolean": (with_lines("  - {name: lamp, position: [1, yes]}"), "lamp' position must be"),
    "object off grid": (
        with_lines("  - {name: lamp, position: [9, 1]}"),
        "object 'lamp' at [9, 1, 0] is off the grid (size 8x6x1)",
    ),
    "object above the grid": (
        with_lines("  - {name: lamp, position: [1, 1, 1]}"),
        "object 'lamp' at [1, 1, 1] is off the grid",
    ),
    "object negative": (with_lines("  - {name: lamp, position: [-1, 1]}"), "is off the grid"),
    "object in a wall": (
        with_lines("  - {name: lamp, position: [3, 1]}"),
        "object 'lamp' at [3, 1, 0] is inside a wall",
    ),
    "agents not a list": (with_lines("agents: {position: [0, 0]}"), "'agents' must be a list"),
    "agent without position": (with_lines("agents:", "  - {facing: east}"), "agent 1 has no position"),
    "agent bad facing": (
        with_lines("agents:", "  - {position: [0, 0], facing: up}"),
        "agent 1 facing must be one of north, east, south, west",
    ),
    "agent start in a wall": (
        with_lines("agents:", "  - {position: [0, 0]}", "  - {position: [3, 0]}"),
        "agent 2 at [3, 0, 0] is inside a wall",
    ),
    "agent start off grid": (with_lines("agents:", "  - {position: [0, 6]}"), "agent 1 at [0, 6, 0] is off"),
    "agent bad pitch": (with_lines("agents:", "  - {position: [0, 0], pitch: 2}"), "pitch must be -1, 0 or 1"),
    "agent boolean roll": (with_lines("agents:", "  - {position: [0, 0], roll: yes}"), "roll must be -1, 0 or 1"),
    "view_distance zero": (with_lines("view_distance: 0"), "'view_distance' must be a positive integer"),
    "view_distance string": (with_lines("view_distance: far"), "'view_distance' must be a positive"),
    "view_distance boolean": (with_lines("view_distance: yes"), "'view_distance' must be a positive"),
    "max_steps negative": (with_lines("max_steps: -5"), "'max_steps' must be a positive integer"),
    "max_steps float": (with_lines("max_steps: 2.5"), "'max_steps' must be a positive integer"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_world_is_one_line_error_naming_the_file(tmp_path, case):
    text, expected = MALFORMED[case]
    message = load_error(write(tmp_path, text))
    assert expected in message


def test_error_message_format(tmp_path):
    path = write(tmp_path, with_lines("  - {name: lamp, position: [9, 1, 0]}"), "bad.yaml")
    assert load_error(path) == f"{path}: object 'lamp' at [9, 1, 0] is off the grid (size 8x6x1)"


def test_missing_file(tmp_path):
    assert "no such file" in load_error(tmp_path / "absent.yaml")


def test_directory_is_not_a_world(tmp_path):
    assert "is a directory" in load_error(tmp_path)


def test_undecodable_file(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    assert "not UTF-8" in load_error(path)


def test_valid_world_and_defaults(tmp_path):
    world = load_world(write(tmp_path, with_lines("  - {name: lamp, position: [1, 4]}")))
    assert (world.name, world.width, world.depth, world.height) == ("test", 8, 6, 1)
    assert world.walls == frozenset({(3, 0), (3, 1)})
    assert list(world.objects.items()) == [("keyboard", (5, 0, 0)), ("lamp", (1, 4, 0))]
    assert world.agent_starts == ()
    assert world.view_distance == 3
    assert world.max_steps is None
    assert world.path == str(tmp_path / "world.yaml")


def test_agent_start_defaults_and_options(tmp_path):
    text = with_lines(
        "agents:",
        "  - {position: [0, 0]}",
        "  - {position: [1, 2, 0], facing: west, pitch: -1, roll: 1}",
        "view_distance: 5",
        "max_steps: 12",
    )
    world = load_world(write(tmp_path, text.replace("[8, 6]", "[8, 6, 2]")))
    assert world.agent_starts == (Pose(0, 0, 0, "north"), Pose(1, 2, 0, "west", -1, 1))
    assert (world.height, world.view_distance, world.max_steps) == (2, 5, 12)


def test_empty_optional_lists_count_as_absent(tmp_path):
    world = load_world(write(tmp_path, VALID.replace("[[3, 0], [3, 1]]", "") + "agents:\n"))
    assert world.walls == frozenset()
    assert world.agent_starts == ()


def test_grid_helpers():
    world = World("w", 3, 2, 2, frozenset({(1, 0)}), {"a": (0, 0, 0)})
    assert world.size == (3, 2, 2)
    assert world.in_bounds(2, 1, 1) and not world.in_bounds(3, 0, 0) and not world.in_bounds(0, 0, 2)
    assert world.in_bounds(1, 0) and not world.is_free(1, 0)
    assert world.is_free(0, 1, 1) and not world.is_free(0, -1)
    assert world.free_cells() == [(0, 0, 0), (0, 1, 0), (1, 1, 0), (2, 0, 0), (2, 1, 0)]


def test_line_of_sight_is_exact_at_corners():
    one_wall = World("w", 5, 5, 1, frozenset({(1, 0)}), {})
    assert line_of_sight((0, 0), (1, 1), one_wall.walls)  # grazes the wall's corner
    assert not line_of_sight((0, 0), (2, 1), one_wall.walls)  # passes through the wall
    assert line_of_sight((0, 0), (1, 0), one_wall.walls)  # the end cells never block
    diagonal = World("w", 5, 5, 1, frozenset({(1, 0), (0, 1)}), {})
    assert not line_of_sight((0, 0), (1, 1), diagonal.walls)  # no gap between touching walls
    assert not line_of_sight((1, 1), (0, 0), diagonal.walls)


# Shipped worlds


def test_the_shipped_worlds_are_there():
    assert {path.stem for path in SHIPPED_WORLDS} >= {"apartment", "office", "warehouse", "garden"}


@pytest.mark.parametrize("path", SHIPPED_WORLDS, ids=lambda path: path.stem)
def test_shipped_world_loads_with_a_budget(path):
    world = load_world(path)
    assert world.name == path.stem
    assert world.max_steps and world.objects


@pytest.mark.parametrize("path", SHIPPED_WORLDS, ids=lambda path: path.stem)
def test_line_of_sight_is_the_same_both_ways(path):
    world = load_world(path)
    cells = [(x, y) for x in range(world.width) for y in range(world.depth)]
    for start in cells:
        for end in cells:
            if abs(start[0] - end[0]) <= 4 and abs(start[1] - end[1]) <= 4:
                assert line_of_sight(start, end, world.walls) == line_of_sight(end, start, world.walls)


def reachable_ground(world, start):
    seen, queue = {start}, deque([start])
    while queue:
        x, y = queue.popleft()
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if world.is_free(nx, ny) and (nx, ny) not in seen:
                seen.add((nx, ny))
                queue.append((nx, ny))
    return seen


@pytest.mark.parametrize("path", SHIPPED_WORLDS, ids=lambda path: path.stem)
def test_every_object_is_reachable_from_every_start(path):
    world = load_world(path)
    # Without given starts an agent may be placed on any free cell, so the
    # whole floor must be one connected region.
    starts = [(pose.x, pose.y) for pose in world.agent_starts] or [(x, y) for x, y, _ in world.free_cells()]
    for start in starts:
        reachable = reachable_ground(world, start)
        for name, (x, y, _z) in world.objects.items():
            # Walls are full height, so a free ground cell means a free column.
            assert (x, y) in reachable, f"{name} cannot be reached from {start}"


def test_default_world_is_the_apartment():
    world = load_world(WORLDS / "apartment.yaml")
    assert world.size == (12, 9, 1)
    assert len(world.objects) == 12
    assert len(world.agent_starts) == 2
    assert (world.view_distance, world.max_steps) == (3, 40)


def test_warehouse_has_objects_up_the_shelves():
    world = load_world(WORLDS / "warehouse.yaml")
    levels = {z for _, _, z in world.objects.values()}
    assert world.height == 3 and levels == {0, 1, 2}
