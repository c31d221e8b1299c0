"""A world as a YAML world file, and as a picture in text (the one world files carry in their comments)."""

from __future__ import annotations

from perception.families.plan import START_POSES, WorldMapping
from perception.starts import team_starts
from perception.world import World, world_from_mapping
from perception.yaml_files import flow_text

WALLS_PER_LINE = 12
PICTURE_MAX = (80, 60)  # larger worlds' files carry no picture: it would be longer than the walls
LEGEND = "(# wall, o object on the floor, 1-9 the level of an object higher up, A agent start; north is up)"


def world_to_yaml(mapping: WorldMapping) -> str:
    """The text of a world file that loads as `mapping` does, with a picture of the world in the comments
    above (for a world up to PICTURE_MAX); WorldError if the mapping is no world."""
    world = world_from_mapping(dict(mapping), mapping["name"])
    lines = [f"# {mapping['name']}"]
    if world.width <= PICTURE_MAX[0] and world.depth <= PICTURE_MAX[1]:
        lines += ["#", *(f"#   {row}" for row in world_picture(world)), f"#   {LEGEND}"]
    lines.append(f"name: {flow_text(mapping['name'])}")
    lines.append(f"size: {flow_text(mapping['size'])}")
    walls = [f"[{x}, {y}]" for x, y in mapping["walls"]]  # flow_text's, without YAML's time a wall: checked ints
    lines.append("walls: [")
    lines += ["  " + ", ".join(walls[at : at + WALLS_PER_LINE]) + "," for at in range(0, len(walls), WALLS_PER_LINE)]
    lines.append("]")
    for key, entries in (("objects", mapping["objects"]), ("rooms", mapping["rooms"]), ("agents", mapping["agents"])):
        if entries:
            lines.append(f"{key}:")
            lines += [f"  - {flow_text(entry)}" for entry in entries]
    if "task" in mapping:
        lines.append(f"task: {flow_text(mapping['task'])}")
    lines.append(f"view_distance: {mapping['view_distance']}")
    lines.append(f"max_steps: {mapping['max_steps']}")
    return "\n".join(lines) + "\n"


def with_run_starts(mapping: WorldMapping, seed: int, agents: int) -> WorldMapping:
    """`mapping` with the start poses a run with `seed` gives a team of `agents` (START_POSES at least) on the
    generated world: a file gives its starts, so it then runs as the generated world does with that seed."""
    world = world_from_mapping(dict(mapping), mapping["name"])
    exported = mapping.copy()
    exported["agents"] = [
        {"position": [pose.x, pose.y], "facing": pose.facing}
        for pose in team_starts(world, seed, max(agents, START_POSES))
    ]
    return exported


def world_picture(world: World) -> list[str]:
    """The world as rows of text, north at the top, one character a cell, as the shipped worlds' comments
    draw them: # wall, . floor, o an object on the floor, a digit the level of the lowest object above it,
    A an agent's start."""
    marks: dict[tuple[int, int], str] = {}
    for x, y, z in sorted(world.objects.values(), key=lambda cell: -cell[2]):
        marks[(x, y)] = "o" if z == 0 else str(min(z, 9))
    for pose in world.agent_starts:
        marks[(pose.x, pose.y)] = "A"
    label = len(f"y{world.depth - 1}")
    return [
        f"{f'y{y}':<{label}} "
        + " ".join("#" if (x, y) in world.walls else marks.get((x, y), ".") for x in range(world.width))
        for y in range(world.depth - 1, -1, -1)
    ]
