"""The shape of JSON read from a run directory that may come from elsewhere, checked before it is used.

A shape is a predicate: true when a value holds what its readers index and add up, of the kind they
expect. A damaged or tampered file is then refused in one line (a trace's line skipped), instead of
failing deep inside the code that reads it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Shape = Callable[[Any], bool]


def anything(value: Any) -> bool:
    return True


def text(value: Any) -> bool:
    return isinstance(value, str)


def whole(value: Any) -> bool:
    return type(value) is int  # a bool is no count


def count(value: Any) -> bool:
    return whole(value) and value >= 0


def number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def flag(value: Any) -> bool:
    return type(value) is bool


def at_least(least: float) -> Shape:
    return lambda value: number(value) and value >= least


def nullable(shape: Shape) -> Shape:
    """`shape`, or null."""
    return lambda value: value is None or shape(value)


def list_of(shape: Shape, least: int = 0, most: int | None = None) -> Shape:
    """A list of `least` to `most` items, each of `shape`."""
    return lambda value: (
        type(value) is list and least <= len(value) <= (len(value) if most is None else most) and all(map(shape, value))
    )


def mapping_of(shape: Shape) -> Shape:
    """An object whose every value is of `shape`."""
    return lambda value: type(value) is dict and all(map(shape, value.values()))


def record(
    required: Mapping[str, Shape] | None = None, optional: Mapping[str, Shape] | None = None, closed: bool = False
) -> Shape:
    """An object with each `required` key, of its shape; each `optional` key it has, of its shape; and
    with `closed`, no other key."""
    required, optional = required or {}, optional or {}

    def holds(value: object) -> bool:
        return (
            type(value) is dict
            and all(key in value and shape(value[key]) for key, shape in required.items())
            and all(shape(value[key]) for key, shape in optional.items() if key in value)
            and (not closed or value.keys() <= required.keys() | optional.keys())
        )

    return holds


def both(*shapes: Shape) -> Shape:
    return lambda value: all(shape(value) for shape in shapes)
