"""Grid geometry: how actions change a pose, and what a pose can see.

Functions over a world's size and a set of wall cells, shared by the mock
world (with its true walls) and by the offline explorer (with the walls it has
found so far), so both agree on what a pose shows. Line of sight is worked out
in integers, exactly, once per view distance (ViewCone).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator

from perception.base import FACING_VECTORS, turn

Cell = tuple[int, int]  # (x, y), or an offset (dx, dy)
Squeeze = tuple[Cell, Cell]  # the two cells that touch a segment only at a grid corner

# Sideways and backward steps are forward steps after this many quarter turns.
STEP_TURNS = {"forward": 0, "move_right": 1, "backward": 2, "move_left": 3}
CLIMBS = {"move_up": 1, "move_down": -1}
TURNS = {"look_right": 1, "look_left": -1}
# Head movements: the pose attribute, its change, and what the limit is called.
HEAD_MOVES = {
    "look_up": ("pitch", 1, "looking fully up"),
    "look_down": ("pitch", -1, "looking fully down"),
    "tilt_left": ("roll", -1, "tilted fully left"),
    "tilt_right": ("roll", 1, "tilted fully right"),
}


def step_offset(pose, action):
    """The (dx, dy, dz) a movement action tries; None for head movements."""
    if action in STEP_TURNS:
        dx, dy = FACING_VECTORS[turn(pose.facing, STEP_TURNS[action])]
        return dx, dy, 0
    if action in CLIMBS:
        return 0, 0, CLIMBS[action]
    return None


def apply_action(pose, action, size, walls):
    """(new pose, outcome, detail); outcome is moved, turned, blocked or unavailable.

    `size` None is a world without edges, as dead reckoning assumes.
    """
    offset = step_offset(pose, action)
    if offset is not None:
        x, y, z = pose.x + offset[0], pose.y + offset[1], pose.z + offset[2]
        if size is not None and not (0 <= x < size[0] and 0 <= y < size[1] and 0 <= z < size[2]):
            return pose, "blocked", "blocked: edge of the world"
        if (x, y) in walls:
            return pose, "blocked", f"blocked by a wall at ({x}, {y})"
        return pose.moved(x=x, y=y, z=z), "moved", f"moved to ({x}, {y}, {z})"
    if action in TURNS:
        facing = turn(pose.facing, TURNS[action])
        return pose.moved(facing=facing), "turned", f"now facing {facing}"
    if action in HEAD_MOVES:
        angle, change, limit = HEAD_MOVES[action]
        value = getattr(pose, angle) + change
        if not -1 <= value <= 1:
            return pose, "blocked", f"already {limit}"
        return pose.moved(**{angle: value}), "turned", f"{angle} now {value:+d}"
    return pose, "unavailable", f"{action!r} is not an action"


class ViewCone:
    """What a pose can see at a view distance: the cells of its cone, each with the cells that could
    hide it, worked out once per facing (a pose's sight is then set lookups, no arithmetic).

    The agent sees one level, z + pitch: its own cell plus a 90-degree cone
    ahead reaching view_distance cells, minus what walls hide. Roll changes nothing.
    """

    def __init__(self, view_distance):
        self.view_distance = view_distance
        self._rays = {}  # facing -> ((dx, dy), crossed, squeezes) for each cell of the cone, as offsets
        self._walls_that_matter = {}  # facing -> offsets (see walls_that_matter)

    def sight(self, pose, size, walls):
        """What `pose` sees: (free cells as (x, y, level), wall cells as (x, y)), both sorted."""
        width, depth, height = size
        level = pose.z + pose.pitch
        if not 0 <= level < height:
            return (), ()
        x0, y0 = pose.x, pose.y
        cells: list[Cell] = [(x0, y0)]
        seen_walls: list[Cell] = []
        for (dx, dy), crossed, squeezes in self._cone(pose.facing):
            cell = (x0 + dx, y0 + dy)
            if 0 <= cell[0] < width and 0 <= cell[1] < depth and _clear(x0, y0, crossed, squeezes, walls):
                (seen_walls if cell in walls else cells).append(cell)
        return tuple(sorted((x, y, level) for x, y in cells)), tuple(sorted(seen_walls))

    def open_sight(self, pose, size):
        """What `pose` sees where no wall stands within view_distance cells of it (no cell of
        walls_that_matter is a wall): sight's free cells, every cell of its cone within the grid, sorted as
        sight sorts them, without tracing a ray."""
        width, depth, height = size
        level = pose.z + pose.pitch
        if not 0 <= level < height:
            return ()
        x0, y0 = pose.x, pose.y
        ahead = [(x0 + dx, y0 + dy) for (dx, dy), _, _ in self._cone(pose.facing)]
        cells = [(x0, y0), *((x, y) for x, y in ahead if 0 <= x < width and 0 <= y < depth)]
        return tuple(sorted((x, y, level) for x, y in cells))

    def walls_that_matter(self, facing):
        """The offsets from a pose facing this way where a wall would change what it sees: the cells of
        its cone, and those the rays to them cross or squeeze between (a wall elsewhere changes nothing)."""
        if facing not in self._walls_that_matter:
            self._walls_that_matter[facing] = frozenset(
                cell
                for offset, crossed, squeezes in self._cone(facing)
                for cell in (offset, *crossed, *(cell for pair in squeezes for cell in pair))
            )
        return self._walls_that_matter[facing]

    def _cone(self, facing):
        if facing not in self._rays:
            offsets = _cone_offsets(facing, self.view_distance)
            self._rays[facing] = tuple((offset, *_segment(*offset)) for offset in offsets)
        return self._rays[facing]


def _cone_offsets(facing, view_distance):
    forward_x, forward_y = FACING_VECTORS[facing]
    right_x, right_y = FACING_VECTORS[turn(facing, 1)]
    return [
        (ahead * forward_x + side * right_x, ahead * forward_y + side * right_y)
        for ahead in range(1, view_distance + 1)
        for side in range(-ahead, ahead + 1)
    ]


def line_of_sight(start: Cell, end: Cell, walls: Collection[Cell]) -> bool:
    """Whether no wall stands between the centres of two (x, y) cells.

    Exact supercover, the same both ways: a wall blocks when the segment
    between the centres passes through its interior (the two end cells never
    block). Where the segment passes exactly through a grid corner it
    squeezes between the two cells that only touch it there; it is blocked
    when both are walls, so walls that meet diagonally leave no gap, while
    grazing one wall's corner does not block.
    """
    crossed, squeezes = _segment(end[0] - start[0], end[1] - start[1])
    return _clear(*start, crossed, squeezes, walls)


def _clear(x0: int, y0: int, crossed: Iterable[Cell], squeezes: Iterable[Squeeze], walls: Collection[Cell]) -> bool:
    """Whether no wall stands on a segment from (x0, y0), given as the offsets it crosses and squeezes between."""
    for dx, dy in crossed:
        if (x0 + dx, y0 + dy) in walls:
            return False
    return not any((x0 + ax, y0 + ay) in walls and (x0 + bx, y0 + by) in walls for (ax, ay), (bx, by) in squeezes)


def _segment(dx: int, dy: int) -> tuple[tuple[Cell, ...], tuple[Squeeze, ...]]:
    """For a segment from (0, 0) to (dx, dy): the cells it passes through (ends excluded) and the
    pairs of cells it squeezes between at grid corners."""
    crossed = tuple(
        cell for cell in _cells_near(dx, dy) if cell not in ((0, 0), (dx, dy)) and _passes_through(dx, dy, cell)
    )
    return crossed, tuple(_corner_squeezes(dx, dy))


def _cells_near(dx, dy):
    """The cells the segment from (0, 0) to (dx, dy) could pass through, column by column: in each,
    those within a cell of the stretch of the segment above it (so a long ray costs its length only)."""
    low_y, high_y = min(0, dy), max(0, dy)
    for x in range(min(0, dx), max(0, dx) + 1):
        if dx == 0:
            ys = range(low_y, high_y + 1)
        else:
            # y over the column x -+ 1/2 runs between these, in units of 1 / (2 |dx|):
            ends = sorted((2 * x + side) * dy * (1 if dx > 0 else -1) for side in (-1, 1))
            scale = 2 * abs(dx)
            ys = range(max(low_y, ends[0] // scale - 1), min(high_y, -(-ends[1] // scale) + 1) + 1)
        for y in ys:
            yield (x, y)


def _passes_through(dx, dy, cell):
    """Whether the segment from (0, 0) to (dx, dy) enters the open square of `cell`.

    Times along the segment are counted in units of 1 / scale, so that the
    times it reaches each edge of the cell (centre -+ 1/2) are integers: exact.
    """
    scale = 2 * (abs(dx) or 1) * (abs(dy) or 1)
    low, high = 0, scale
    for delta, centre in ((dx, cell[0]), (dy, cell[1])):
        if delta == 0:
            if centre != 0:  # integer coordinates: inside the open slab only if equal
                return False
            continue
        # (2 * centre -+ 1) / (2 * delta) in units of 1 / scale:
        edges = sorted((2 * centre + side) * (scale // (2 * abs(delta))) * (1 if delta > 0 else -1) for side in (-1, 1))
        low, high = max(low, edges[0]), min(high, edges[1])
    return low < high


def _corner_squeezes(dx: int, dy: int) -> Iterator[Squeeze]:
    """For each grid corner strictly inside the segment from (0, 0) to (dx, dy), the two cells
    touching it only there."""
    if dx == 0 or dy == 0:
        return
    step_x, step_y = (1 if dx > 0 else -1), (1 if dy > 0 else -1)
    for k in range(abs(dx)):
        # The segment crosses x = step_x * (k + 1/2); it is at a corner there when the rise,
        # in doubled coordinates (2k + 1) * dy / |dx|, is an odd integer.
        corner_x2 = step_x * (2 * k + 1)
        rise2, remainder = divmod((2 * k + 1) * dy, abs(dx))
        if remainder == 0 and rise2 % 2 == 1:
            yield (
                ((corner_x2 + step_x) // 2, (rise2 - step_y) // 2),
                ((corner_x2 - step_x) // 2, (rise2 + step_y) // 2),
            )


def nearest_by_walking(start: Cell, count: int, is_free: Callable[[Cell], bool]) -> list[Cell]:
    """Up to `count` free cells nearest the free cell `start` by walking, `start` first (breadth first, in the
    order east, west, north, south)."""
    found, seen, queue = [start], {start}, deque([start])
    while queue and len(found) < count:
        x, y = queue.popleft()
        for near in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if near not in seen and is_free(near):
                seen.add(near)
                found.append(near)
                queue.append(near)
    return found[:count]


def open_run(cell: Cell, facing: str, is_free: Callable[[Cell], bool]) -> int:
    """How many free cells lie straight ahead of `cell` facing `facing`, up to the first that is not."""
    dx, dy = FACING_VECTORS[facing]
    run = 0
    while is_free((cell[0] + dx * (run + 1), cell[1] + dy * (run + 1))):
        run += 1
    return run
