"""The map a team of classical explorers shares, as each of them holds it: every cell and wall any member's
committed steps saw (the team's store, `TeamMap.map_news`), with what this agent sees this step, as arrays.

A copy grows only by marking what the context and the store say, so reading the same context twice changes
nothing, and a copy that has read the same news holds the same map whatever read it.
"""

from __future__ import annotations

import numpy as np

from explorer.policies import grid_arrays
from nodes.decision_context import Cell, DecisionContext, Wall
from perception.geometry import step_offset

MOVES = ("forward", "backward", "move_left", "move_right", "move_up", "move_down")


class TeamGrid:
    """What the team knows of a grid world: the cells seen (W, D, H), the columns walled and seen free (W, D)."""

    def __init__(self) -> None:
        self.size: tuple[int, int, int] | None = None
        self.seen = np.zeros((0, 0, 0), dtype=bool)
        self.walls = np.zeros((0, 0), dtype=bool)
        self.open = np.zeros((0, 0), dtype=bool)
        self.read = (0, 0)  # how much of the team's map this copy has read

    def learn(self, context: DecisionContext) -> None:
        """Take in the team's map as its store holds it, and this step's own view."""
        size = context.team.size
        assert size is not None, "a grid world's size is known"
        if self.size != size:
            self.size = size
            self.seen = np.zeros(size, dtype=bool)
            self.walls = np.zeros(size[:2], dtype=bool)
            self.open = np.zeros(size[:2], dtype=bool)
            self.read = (0, 0)
        team_map = context.teammates.team_map
        if team_map is not None:
            news = team_map.map_news(self.read)
            self.mark(news.cells, news.walls)
            self.read = news.read
        self.mark(context.view.seen_cells, context.view.seen_walls)
        self._learn_blocked(context)

    def mark(self, cells: tuple[Cell, ...], walls: tuple[Wall, ...]) -> None:
        grid_arrays.mark(self.seen, cells)
        grid_arrays.mark(self.open, [cell[:2] for cell in cells])
        grid_arrays.mark(self.walls, walls)

    def _learn_blocked(self, context: DecisionContext) -> None:
        """A move that was blocked met a wall (or the world's edge) the map did not show."""
        last = context.recent_actions[-1] if context.recent_actions else None
        if not last or last["outcome"] != "blocked" or last["action"] not in MOVES or context.view.actions_unseen:
            return
        pose = context.view.pose
        dx, dy, dz = step_offset(pose, last["action"])
        x, y = pose.x + dx, pose.y + dy
        width, depth, _ = self.seen.shape
        if dz == 0 and 0 <= x < width and 0 <= y < depth and not self.open[x, y]:
            self.walls[x, y] = True

    def passable(self) -> np.ndarray:
        """(W, D, H): the cells known free, every level of a column seen free (walls stand on every level)."""
        return np.broadcast_to((self.open & ~self.walls)[:, :, None], self.seen.shape)

    def unknown(self) -> np.ndarray:
        """(W, D, H): the cells not seen, of columns not known walled: what is left to see."""
        return ~self.seen & ~self.walls[:, :, None]
