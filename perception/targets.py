"""Search targets: what a task asks the team to find (a world file's `task: {find: [...]}`, or `--find`).

A target names objects: the object of that name, and its numbered copies
(`toothbrush` is found by seeing `toothbrush` or `toothbrush_2`), since a
world names its second toothbrush so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MAX_TARGETS = 20  # a task is a handful of things to find, not an inventory
NAMES_SHOWN = 30  # the names a refused target's message lists, at most: a world may hold hundreds
NAMES_CHARS = 160  # and their characters, at most, so that the message stays one whole line
COPY_SUFFIX = re.compile(r"_[0-9]+")
FIND_FORM = "a list of objects' names, as [toothbrush, laptop], or one text of them, as toothbrush,laptop"


def target_names(value: object) -> tuple[str, ...]:
    """The targets a `find` gives (a world file's or a sweep file's, or --find): a list of names, or one text
    of names split by commas; ValueError, one line, for anything else or an empty name."""
    if isinstance(value, str):
        names = [name.strip() for name in value.split(",")]
    elif isinstance(value, list) and all(isinstance(name, str) for name in value):
        names = [name.strip() for name in value]
    else:
        raise ValueError(f"'find' must be {FIND_FORM}, not {value!r}")
    if not names or not all(names):
        raise ValueError(f"'find' must be {FIND_FORM}, got {value!r}")
    return tuple(names)


def listed_names(names: Iterable[str]) -> str:
    """`names`, sorted, each once, at most NAMES_SHOWN of them (NAMES_CHARS characters) and how many more:
    for a one-line message."""
    unique = sorted(set(names))
    shown: list[str] = []
    for name in unique[:NAMES_SHOWN]:
        if shown and len(", ".join([*shown, name])) > NAMES_CHARS:
            break
        shown.append(name)
    more = len(unique) - len(shown)
    return f"{', '.join(shown)} and {more} more" if more > 0 else ", ".join(shown)


def base_name(name: str) -> str:
    """An object's name without its copy's number: `toothbrush_2` -> `toothbrush`."""
    match = re.search(r"_[0-9]+$", name)
    return name[: match.start()] if match else name


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
