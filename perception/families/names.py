"""Names of generated worlds: `gen:house`, or with parameters, `gen:house?size=40x30&seed=7`.

The parameters: size (WIDTHxDEPTH), walls (0..1: how much of the family's
wall structure), objects (objects per free cell), view (view distance),
levels (warehouse only), find (a search task's targets, placed by the kind of
room: find=toothbrush,laptop) and seed. Those not given take the family's defaults
(the seed: the run's world seed).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from perception.families.catalogue import check_params, family_named
from perception.families.plan import Family, FamilyParams
from perception.world import MAX_CELLS, MAX_VIEW_DISTANCE, WorldError

PREFIX = "gen:"
PARAMETERS = ("size", "walls", "objects", "view", "levels", "find", "seed")
SIZE = re.compile(r"([0-9]{1,7})x([0-9]{1,7})")
WHOLE = re.compile(r"[0-9]{1,12}")
TARGETS = re.compile(r"[a-z0-9_]{1,40}(,[a-z0-9_]{1,40}){0,19}")
FRACTION = re.compile(r"[0-9]{0,6}(\.[0-9]{1,6})?")
# What a parameter must be, as its error says.
FRACTION_FORM = "a number from 0 to 1 such as 0.5, of at most 6 decimals"
TARGETS_FORM = "names such as toothbrush,laptop: at most 20, each of at most 40 lowercase letters, digits or _"


class WorldName(NamedTuple):
    family: str
    params: FamilyParams  # every parameter, the family's defaults where the name gives none
    seed: int | None  # None: the name gives no seed


def is_generated(name: str) -> bool:
    return str(name).startswith(PREFIX)


def parse_world_name(name: str) -> WorldName:
    """The family, parameters and seed a generated world's name gives; WorldError (one line) for an
    unknown family or a bad parameter."""
    if not is_generated(name):
        raise WorldError(name, f"a generated world's name starts with {PREFIX!r}, as in gen:house")
    family_name, _, query = name[len(PREFIX) :].partition("?")
    family = family_named(family_name, name)
    given: dict[str, str] = {}
    for part in query.split("&") if query else ():
        key, equals, value = part.partition("=")
        if not equals or not value:
            raise WorldError(name, f"parameter {part!r} must be KEY=VALUE")
        if key in given:
            raise WorldError(name, f"parameter {key!r} is given twice")
        given[key] = value
    params, seed = family.defaults, None
    for key, value in given.items():
        if key == "seed":
            seed = int(_matched(WHOLE, value, "seed", "a whole number, 0 or more, of at most 12 digits", name).group())
        else:
            params = replace(params, **_parameter(family, key, value, name))
    check_params(family, params, name)
    return WorldName(family.name, params, seed)


def _parameter(family: Family, key: str, value: str, name: str) -> dict:
    """The FamilyParams fields one parameter sets."""
    if key == "size":
        form = f"WIDTHxDEPTH, as in 40x30 (whole numbers, at most {MAX_CELLS:,} cells)"
        width, depth = _matched(SIZE, value, "size", form, name).groups()
        return {"width": int(width), "depth": int(depth)}
    if key in ("walls", "objects"):
        return {key: float(_matched(FRACTION, value, key, FRACTION_FORM, name).group())}
    if key == "view":
        form = f"a whole number from 1 to {MAX_VIEW_DISTANCE}"
        return {"view_distance": int(_matched(WHOLE, value, key, form, name).group())}
    if key == "find":
        return {"find": tuple(dict.fromkeys(_matched(TARGETS, value, key, TARGETS_FORM, name).group().split(",")))}
    if key == "levels" and family.has_levels:
        return {"levels": int(_matched(WHOLE, value, key, "a whole number, 1 or more", name).group())}
    allowed = [known for known in PARAMETERS if known != "levels" or family.has_levels]
    raise WorldError(name, f"unknown parameter {key!r} for a {family.name} (parameters: {', '.join(allowed)})")


def _matched(pattern: re.Pattern, value: str, key: str, form: str, name: str) -> re.Match:
    match = pattern.fullmatch(value)
    if not match or value in (".", ""):
        raise WorldError(name, f"{key} must be {form}, got {value!r}")
    return match


def world_name(family: Family, seed: int, params: FamilyParams) -> str:
    """The name that makes this world again: the parameters that differ from the family's defaults, and the seed."""
    defaults = family.defaults
    parts = []
    if (params.width, params.depth) != (defaults.width, defaults.depth):
        parts.append(f"size={params.width}x{params.depth}")
    for key, field in (("walls", "walls"), ("objects", "objects"), ("view", "view_distance"), ("levels", "levels")):
        if getattr(params, field) != getattr(defaults, field):
            parts.append(f"{key}={getattr(params, field):g}")
    if params.find:
        parts.append(f"find={','.join(params.find)}")
    parts.append(f"seed={seed}")
    return f"{PREFIX}{family.name}?{'&'.join(parts)}"
