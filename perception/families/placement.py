"""A search task's targets, placed in a generated world by the kind of room they belong in, with some noise:
most toothbrushes are in a bathroom, not all (TARGET_NOISE), so that knowing the world helps and is not
everything. The world's own random draws place them, after its layout: the same seed, the same places."""

from __future__ import annotations

import random

from perception.families.plan import Plan, PlannedRoom
from perception.families.things import category_of, findable_things, home_kinds
from perception.targets import listed_names, target_of
from perception.world import WorldError

TARGET_NOISE = 0.2  # the chance a target is placed in a room of another kind than its own


def check_findable_names(targets: tuple[str, ...], source: str) -> None:
    """WorldError (one line, naming `source`) for a target no generated world knows where to put."""
    for target in targets:
        if not home_kinds(target):
            things = listed_names(findable_things())
            raise WorldError(
                source, f"unknown target {target!r}: a generated world holds no such thing (it may hold {things})"
            )


def place_targets(rng: random.Random, plan: Plan, targets: tuple[str, ...]) -> None:
    """One object per target, named as the target, in a room of its kind (or, one time in TARGET_NOISE,
    of another), on a free cell no object holds; the objects the family scattered that are targets go,
    so that each target is where this placed it. A world without rooms takes them anywhere on its ground."""
    plan.keep_objects(lambda name: target_of(name, targets) is None)
    for target in targets:
        plan.name_uses[target] = 0  # its copies are gone: the one placed takes the target's own name
        kinds = home_kinds(target)
        taken = plan.occupied
        rooms = [room for room in plan.rooms if any((*cell, 0) not in taken for cell in plan.free_cells(room.rect))]
        cells = plan.free_cells(_chosen_room(rng, rooms, kinds).rect) if rooms else plan.free_cells()
        places = [(*cell, 0) for cell in cells if (*cell, 0) not in taken]
        if places:
            plan.add_object(target, rng.choice(places), category_of(kinds[0]))
    plan.targets = targets


def _chosen_room(rng: random.Random, rooms: list[PlannedRoom], kinds: tuple[str, ...]) -> PlannedRoom:
    """A room of the first of `kinds` the world has (any of them, but one time in TARGET_NOISE), else any room."""
    home_kind = next((kind for kind in kinds if any(room.kind == kind for room in rooms)), None)
    home = [room for room in rooms if room.kind == home_kind]
    elsewhere = [room for room in rooms if room.kind != home_kind]
    if home and (not elsewhere or rng.random() >= TARGET_NOISE):
        return rng.choice(home)
    return rng.choice(elsewhere)
