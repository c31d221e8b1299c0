"""Where a team starts on a generated world: together, at a place the run's seed draws.

A generated world's start poses are its generator's suggestion; a run places its team by its seed instead,
so a sweep's seeds are replicates on a generated world as on a world file with `--random-starts`. The team
starts as a generator places one: on the free cells nearest one place by walking, each agent facing its
longest open view. The first `k` starts of a larger team are a smaller team's starts.
"""

from __future__ import annotations

import random

from perception.base import FACINGS, Pose
from perception.geometry import Cell, nearest_by_walking, open_run
from perception.world import World

DRAWS_BEFORE_LISTING = 64  # random cells tried before listing the free ones: a world is mostly free ground


def team_starts(world: World, seed: int, count: int) -> tuple[Pose, ...]:
    """`count` start poses (fewer only where the ground has fewer cells) for a run with `seed` on `world`."""
    rng = random.Random(f"{seed}:team start")
    is_free = _ground_is_free(world)
    cells = nearest_by_walking(_random_free_cell(world, rng), count, is_free)
    return tuple(Pose(x, y, 0, max(FACINGS, key=lambda facing: open_run((x, y), facing, is_free))) for x, y in cells)


def _ground_is_free(world: World):
    return lambda cell: world.is_free(cell[0], cell[1])


def _random_free_cell(world: World, rng: random.Random) -> Cell:
    for _ in range(DRAWS_BEFORE_LISTING):
        cell = (rng.randrange(world.width), rng.randrange(world.depth))
        if world.is_free(*cell):
            return cell
    x, y, _ = rng.choice(world.free_cells())
    return x, y
