"""Line of sight in integers (perception/geometry.py) against a plain reference in exact fractions."""

from fractions import Fraction
from functools import cache

import pytest

from perception.base import FACING_VECTORS, FACINGS, Pose, turn
from perception.geometry import ViewCone, line_of_sight
from perception.world import SHIPPED_WORLDS, load_world

SHIPPED = sorted(SHIPPED_WORLDS.glob("*.yaml"))


def reference_sight(pose, view_distance, size, walls):
    """What a pose sees, worked out the plain way: each cell of the cone, each cell in its box, in fractions."""
    width, depth, height = size
    level = pose.z + pose.pitch
    if not 0 <= level < height:
        return (), ()
    forward_x, forward_y = FACING_VECTORS[pose.facing]
    right_x, right_y = FACING_VECTORS[turn(pose.facing, 1)]
    cells, seen_walls = [(pose.x, pose.y)], []
    for ahead in range(1, view_distance + 1):
        for side in range(-ahead, ahead + 1):
            x, y = pose.x + ahead * forward_x + side * right_x, pose.y + ahead * forward_y + side * right_y
            if 0 <= x < width and 0 <= y < depth and reference_line_of_sight((pose.x, pose.y), (x, y), walls):
                (seen_walls if (x, y) in walls else cells).append((x, y))
    return tuple(sorted((x, y, level) for x, y in cells)), tuple(sorted(seen_walls))


def reference_line_of_sight(start, end, walls):
    crossed, squeezes = reference_segment(end[0] - start[0], end[1] - start[1])
    x0, y0 = start
    if any((x0 + dx, y0 + dy) in walls for dx, dy in crossed):
        return False
    return not any((x0 + a[0], y0 + a[1]) in walls and (x0 + b[0], y0 + b[1]) in walls for a, b in squeezes)


@cache  # a pure function of the offset; the reference is slow
def reference_segment(dx, dy):
    """The cells the segment (0, 0)-(dx, dy) passes through, ends excluded, and the cell pairs it squeezes between."""
    crossed = tuple(
        (x, y)
        for x in range(min(0, dx), max(0, dx) + 1)
        for y in range(min(0, dy), max(0, dy) + 1)
        if (x, y) not in ((0, 0), (dx, dy)) and reference_passes_through(dx, dy, (x, y))
    )
    squeezes = []
    if dx and dy:
        step_x, step_y = (1 if dx > 0 else -1), (1 if dy > 0 else -1)
        for k in range(abs(dx)):
            corner_x2, rise2 = step_x * (2 * k + 1), Fraction((2 * k + 1) * dy, abs(dx))
            if rise2.denominator == 1 and rise2.numerator % 2 == 1:
                squeezes.append(
                    (
                        ((corner_x2 + step_x) // 2, (rise2.numerator - step_y) // 2),
                        ((corner_x2 - step_x) // 2, (rise2.numerator + step_y) // 2),
                    )
                )
    return crossed, tuple(squeezes)


def reference_passes_through(dx, dy, cell):
    """Whether the segment enters the cell's open square: the times it is inside on each axis overlap."""
    low, high = Fraction(0), Fraction(1)
    for delta, centre in ((dx, cell[0]), (dy, cell[1])):
        if delta == 0:
            if centre != 0:
                return False
            continue
        edges = sorted(Fraction(2 * centre + side, 2 * delta) for side in (-1, 1))
        low, high = max(low, edges[0]), min(high, edges[1])
    return low < high


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_sight_matches_the_reference_from_every_pose(path):
    world = load_world(path)
    cone = ViewCone(world.view_distance)
    poses = [
        Pose(x, y, z, facing, pitch)
        for x in range(world.width)
        for y in range(world.depth)
        for z in range(world.height)
        for facing in FACINGS
        for pitch in (-1, 0, 1)
    ]
    for pose in poses:
        assert cone.sight(pose, world.size, world.walls) == reference_sight(
            pose, world.view_distance, world.size, world.walls
        ), pose


def test_line_of_sight_matches_the_reference_with_any_wall_or_corner_pair_near_it():
    for dx in range(-6, 7):
        for dy in range(-6, 7):
            near = [
                (x, y) for x in range(min(0, dx) - 1, max(0, dx) + 2) for y in range(min(0, dy) - 1, max(0, dy) + 2)
            ]
            corner_pairs = [{a, b} for a in near for b in near if b[0] == a[0] + 1 and abs(b[1] - a[1]) == 1]
            for walls in [{cell} for cell in near] + corner_pairs:
                expected = reference_line_of_sight((0, 0), (dx, dy), walls)
                assert line_of_sight((0, 0), (dx, dy), walls) == expected, (dx, dy, walls)
