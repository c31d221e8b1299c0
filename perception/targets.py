"""Search targets: what a task asks the team to find (a world file's `task: {find: [...]}`, or `--find`).

A target names objects: the object of that name, and its numbered copies
(`toothbrush` is found by seeing `toothbrush` or `toothbrush_2`), since a
world names its second toothbrush so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MAX_TARGETS = 20  # a task is a handful of things to find, not an inventory
COPY_SUFFIX = re.compile(r"_[0-9]+")


def is_target_object(name: str, target: str) -> bool:
    """True when the object `name` is the target `target` or one of its numbered copies."""
    return name == target or (name.startswith(target) and COPY_SUFFIX.fullmatch(name[len(target) :]) is not None)


def target_of(name: str, targets: Iterable[str]) -> str | None:
    """The target the object `name` is (the first that matches), or None."""
    return next((target for target in targets if is_target_object(name, target)), None)


def missing_targets(targets: Iterable[str], objects: Iterable[str]) -> list[str]:
    """The targets no object of `objects` is."""
    names = list(objects)
    return [target for target in targets if not any(is_target_object(name, target) for name in names)]


def first_finds(targets: Iterable[str], discoveries: Mapping[str, int]) -> dict[str, int | None]:
    """{target: the first step at which one of its objects was found, or None}; `discoveries` is
    {object: the step it was found at}."""
    steps: dict[str, int | None] = {}
    for target in targets:
        found = [step for name, step in discoveries.items() if is_target_object(name, target)]
        steps[target] = min(found) if found else None
    return steps


def spoken(target: str) -> str:
    """A target as words, for a prompt or an embedding: `frying_pan` -> `frying pan`."""
    return target.replace("_", " ")
