"""What the environments render: the team's map as the live console draws it (explorer/report/text_map.py), as
text ("ansi"), or as an image ("rgb_array": height x width x 3 uint8, north up).

Both show the ground the team has seen, the walls it has met, the objects found and each agent where it
stands; the image gives each cell a square of CELL_PIXELS pixels, fewer in a large world, so that the image
stays within IMAGE_PIXELS pixels a side (a cell at least 1: a world wider than that gives a wider image).
"""

from __future__ import annotations

import numpy as np

from explorer.envs.episode import Episode
from explorer.records.errors import ConfigError
from explorer.report.text_map import TextMap

RENDER_MODES = ("ansi", "rgb_array")
RENDER_FPS = 4  # a step's map a quarter of a second, for a recorder that asks
CELL_PIXELS = 8
IMAGE_PIXELS = 1024
UNSEEN, SEEN, WALL, FOUND = (25, 25, 25), (205, 205, 205), (95, 95, 95), (235, 180, 30)
AGENT_COLOURS = ((220, 40, 40), (40, 90, 220), (30, 160, 60), (180, 50, 180), (200, 170, 0), (0, 170, 190))
# The edge of an agent's square it faces: (rows, columns) of its square, north up.
FACING_EDGE = {
    "north": (slice(0, 2), slice(None)),
    "south": (slice(-2, None), slice(None)),
    "east": (slice(None), slice(-2, None)),
    "west": (slice(None), slice(0, 2)),
}


def checked_render_mode(render_mode: str | None) -> str | None:
    """`render_mode`, one of RENDER_MODES or None; ConfigError, one line, for another."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ConfigError(
            f"render_mode must be one of {', '.join(map(repr, RENDER_MODES))} or None, not {render_mode!r}"
        )
    return render_mode


def team_map(episode: Episode) -> TextMap:
    """The live console's map of what the episode's team knows so far."""
    drawn = TextMap(episode.world.width, episode.world.depth, episode.agent_ids)
    drawn.add({"agent_id": "", "seen_cells": list(episode.team_cells), "seen_walls": list(episode.team_walls)})
    for name, found in episode.store.discoveries().items():
        if found["cell"] is not None:
            drawn.add({"agent_id": found["finder"], "object_cells": {name: found["cell"]}, "new_objects": [name]})
    for agent_id, pose in episode.store.positions().items():
        if pose is not None:
            drawn.add({"agent_id": agent_id, "result": {"pose": pose}})
    return drawn


def ansi(episode: Episode) -> str:
    """The whole map as the console shows it, two characters a cell, and its legend."""
    drawn = team_map(episode)
    return f"{drawn.render(drawn.width, drawn.depth).plain}\n{drawn.legend().plain}"


def rgb_array(episode: Episode) -> np.ndarray:
    """The map as an image: height x width x 3 uint8, north up."""
    drawn = team_map(episode)
    side = max(1, min(CELL_PIXELS, IMAGE_PIXELS // max(drawn.width, drawn.depth)))
    cells = np.empty((drawn.depth, drawn.width, 3), dtype=np.uint8)
    cells[:] = UNSEEN
    for colour, where in ((SEEN, drawn.seen), (WALL, drawn.walls), (FOUND, drawn.objects)):
        for x, y in where:
            cells[y, x] = colour
    image = np.repeat(np.repeat(cells[::-1], side, axis=0), side, axis=1)
    for agent_id, (x, y, facing) in drawn.poses.items():
        square = image[(drawn.depth - 1 - y) * side :, x * side :][:side, :side]
        square[:] = AGENT_COLOURS[drawn.agents[agent_id] % len(AGENT_COLOURS)]
        if side > 2:
            rows, columns = FACING_EDGE[facing]
            square[rows, columns] = (255, 255, 255)
    return image


def rendered(episode: Episode, render_mode: str | None) -> str | np.ndarray | None:
    """What `render()` gives in `render_mode` (None: nothing, as Gymnasium has it)."""
    if render_mode == "ansi":
        return ansi(episode)
    return rgb_array(episode) if render_mode == "rgb_array" else None
