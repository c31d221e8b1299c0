"""Grid geometry: how actions change a pose, and what a pose can see.

Pure functions over a world's size and a set of wall cells, shared by the
mock world (with its true walls) and by the offline explorer (with the walls
it has found so far), so both agree on what a pose shows.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from perception.base import FACING_VECTORS, turn

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


def sight(pose, view_distance, size, walls):
    """What a pose sees: (free cells as (x, y, level), wall cells as (x, y)), both sorted.

    The agent sees one level, z + pitch: its own cell plus a 90-degree cone
    ahead reaching view_distance cells, minus what walls hide. Roll changes nothing.
    """
    width, depth, height = size
    level = pose.z + pose.pitch
    if not 0 <= level < height:
        return (), ()
    origin = (pose.x, pose.y)
    cells, seen_walls = [origin], []
    for cell in _cone(pose, view_distance, width, depth):
        if line_of_sight(origin, cell, walls):
            (seen_walls if cell in walls else cells).append(cell)
    return tuple(sorted((x, y, level) for x, y in cells)), tuple(sorted(seen_walls))


def _cone(pose, view_distance, width, depth):
    forward_x, forward_y = FACING_VECTORS[pose.facing]
    right_x, right_y = FACING_VECTORS[turn(pose.facing, 1)]
    for ahead in range(1, view_distance + 1):
        for side in range(-ahead, ahead + 1):
            x = pose.x + ahead * forward_x + side * right_x
            y = pose.y + ahead * forward_y + side * right_y
            if 0 <= x < width and 0 <= y < depth:
                yield (x, y)


def line_of_sight(start, end, walls):
    """Whether no wall stands between the centres of two (x, y) cells.

    Exact supercover, computed with fractions so it is the same both ways:
    a wall blocks when the segment between the centres passes through its
    interior (the two end cells never block). Where the segment passes
    exactly through a grid corner it squeezes between the two cells that
    only touch it there; it is blocked when both are walls, so walls that
    meet diagonally leave no gap, while grazing one wall's corner does not
    block.
    """
    (x0, y0), (x1, y1) = start, end
    crossed, squeezes = _segment(x1 - x0, y1 - y0)
    if any((x0 + dx, y0 + dy) in walls for dx, dy in crossed):
        return False
    return not any(
        (x0 + ax, y0 + ay) in walls and (x0 + bx, y0 + by) in walls for (ax, ay), (bx, by) in squeezes
    )


@cache
def _segment(dx, dy):
    """For a segment from (0, 0) to (dx, dy): the cells it passes through (ends excluded) and the
    pairs of cells it squeezes between at grid corners. A pure function of the offset, so kept."""
    start, end = (0, 0), (dx, dy)
    crossed = tuple(
        (x, y)
        for x in range(min(0, dx), max(0, dx) + 1)
        for y in range(min(0, dy), max(0, dy) + 1)
        if (x, y) not in (start, end) and _passes_through(start, end, (x, y))
    )
    return crossed, tuple(_corner_squeezes(start, end))


def _passes_through(start, end, cell):
    """Whether the segment between two cell centres enters the open square of `cell`."""
    low, high = Fraction(0), Fraction(1)
    for begin, finish, centre in zip(start, end, cell):
        delta = finish - begin
        if delta == 0:
            if begin != centre:  # integer coordinates: inside the open slab only if equal
                return False
            continue
        # Times at which this coordinate reaches the two edges of the cell.
        edges = sorted(Fraction(2 * (centre - begin) + side, 2 * delta) for side in (-1, 1))
        low, high = max(low, edges[0]), min(high, edges[1])
    return low < high


def _corner_squeezes(start, end):
    """For each grid corner strictly inside the segment, the two cells touching it only there."""
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    if dx == 0 or dy == 0:
        return
    step_x, step_y = (1 if dx > 0 else -1), (1 if dy > 0 else -1)
    for k in range(abs(dx)):
        # The segment crosses x = x0 + step_x * (k + 1/2); in doubled coordinates:
        corner_x2 = 2 * x0 + step_x * (2 * k + 1)
        rise2 = Fraction((2 * k + 1) * dy, abs(dx))
        if rise2.denominator == 1 and rise2.numerator % 2 == 1:
            corner_y2 = 2 * y0 + rise2.numerator
            yield (
                ((corner_x2 + step_x) // 2, (corner_y2 - step_y) // 2),
                ((corner_x2 - step_x) // 2, (corner_y2 + step_y) // 2),
            )
