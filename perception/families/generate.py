"""Making a generated world: what the rest of the program calls.

- `open_world(name_or_path, world_seed, targets)`: the World for a `gen:` name or a world file's path, with
  the task to find `targets` where given (--find: a generated world places them, by the kind of room).
- `generated_mapping(name, world_seed)`: a `gen:` name's world-file mapping (to export it as YAML with
  `export.world_to_yaml`).
- `generate_world(family, seed, params)`: a family's world-file mapping.

A family's generator is tried with the seed, then again with the next attempt
of it, until its world passes the checks every world file gets and the
findability check (perception/findable.py): same seed, same attempts, same world.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from perception.families.catalogue import check_params, family_named
from perception.families.names import is_generated, parse_world_name, world_name
from perception.families.placement import check_findable_names, place_targets
from perception.families.plan import Family, FamilyParams, WorldMapping
from perception.findable import findability_problems
from perception.world import World, WorldError, load_world, too_many_objects, with_targets, world_from_mapping

MAX_ATTEMPTS = 20
DEFAULT_WORLD_SEED = 0


def open_world(name_or_path: str | Path, world_seed: int | None = None, targets: tuple[str, ...] = ()) -> World:
    """The world a `--world` value names: generated for a `gen:` name (with `world_seed` where the name
    gives no seed), read from the file otherwise; given `targets`, its task is to find them (a generated
    world places them; a file's must hold them). A generated world's team starts where a run's seed draws
    (perception/starts.py). Any problem raises WorldError, one line."""
    if not is_generated(str(name_or_path)):
        world = load_world(name_or_path)
        return with_targets(world, targets) if targets else world
    return replace(_generated(str(name_or_path), world_seed, targets)[1], starts_by_seed=True)


def generated_mapping(name: str, world_seed: int | None = None, targets: tuple[str, ...] = ()) -> WorldMapping:
    """The world-file mapping of the world a `gen:` name makes (see open_world)."""
    return _generated(name, world_seed, targets)[0]


def generate_world(family: str, seed: int, params: FamilyParams | None = None) -> WorldMapping:
    """A world of the family for this seed (the family's defaults where `params` is None), checked."""
    chosen = family_named(family, f"gen:{family}")
    return _make(chosen, seed, params or chosen.defaults)[0]


def _generated(name: str, world_seed: int | None, targets: tuple[str, ...] = ()) -> tuple[WorldMapping, World]:
    family, params, seed = parse_world_name(name)
    if targets:  # --find stands for the targets the name gives, as the world seed for its seed
        check_findable_names(targets, f"{name} with --find {','.join(targets)}")  # named as the user wrote them
        params = replace(params, find=tuple(dict.fromkeys(targets)))
    if seed is None:
        seed = DEFAULT_WORLD_SEED if world_seed is None else world_seed
    elif world_seed is not None and world_seed != seed:
        raise WorldError(name, f"the name gives seed {seed} and the world seed is {world_seed}: give one")
    return _make(family_named(family, name), seed, params)


def _make(family: Family, seed: int, params: FamilyParams) -> tuple[WorldMapping, World]:
    name = world_name(family, seed, params)
    check_params(family, params, name)
    check_findable_names(params.find, name)
    problems: list[str] = []
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(f"{family.name}:{seed}:{attempt}")
        plan = family.build(rng, params)
        if params.find:
            place_targets(rng, plan, params.find)
        too_many = too_many_objects(len(plan.objects))
        if too_many:  # as the world check would say, without mapping the world first
            raise WorldError(name, too_many)
        mapping = plan.to_mapping(name, params.view_distance)
        world = world_from_mapping(dict(mapping), name)
        problems = findability_problems(world)
        if not problems:
            return mapping, world
    raise WorldError(name, f"no valid world in {MAX_ATTEMPTS} attempts: {problems[0]}")
