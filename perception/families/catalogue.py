"""The world families, by name, and the checks their parameters get before a world is made."""

from __future__ import annotations

from perception.families import corridor, hall, house, maze, office, warehouse
from perception.families.plan import Family, FamilyParams
from perception.world import MAX_CELLS, MAX_VIEW_DISTANCE, WorldError

FAMILIES = {
    family.name: family
    for family in (corridor.FAMILY, house.FAMILY, office.FAMILY, maze.FAMILY, warehouse.FAMILY, hall.FAMILY)
}


def family_named(name: str, source: str) -> Family:
    """The family called `name`; WorldError naming `source` if there is none."""
    if name not in FAMILIES:
        problem = f"unknown world family {name!r}" if name else "no world family named"
        raise WorldError(source, f"{problem} (families: {', '.join(sorted(FAMILIES))}), as in gen:house")
    return FAMILIES[name]


def check_params(family: Family, params: FamilyParams, source: str) -> None:
    """Refuse, in one line naming `source`, parameters no world of the family can have, or one too large
    for any world (the limits of world files) before it is made."""
    problem = _params_problem(family, params)
    if problem:
        raise WorldError(source, problem)


def _params_problem(family: Family, params: FamilyParams) -> str | None:
    width, depth, levels = params.width, params.depth, params.levels
    least_width, least_depth = family.min_size
    if width < least_width or depth < least_depth:
        return f"size {width}x{depth} is too small for a {family.name}: at least {least_width}x{least_depth}"
    if levels < 1:
        return f"levels must be at least 1, got {levels}"
    if levels > 1 and not family.has_levels:
        return f"a {family.name} has one level, got {levels}"
    if width * depth * levels > MAX_CELLS:
        return f"'size' {width}x{depth}x{levels} has more than {MAX_CELLS:,} cells"
    if not 0 <= params.walls <= 1:
        return f"walls must be between 0 and 1, got {params.walls}"
    if not 0 < params.objects <= 1:
        return f"objects must be more than 0 and at most 1 (objects per free cell), got {params.objects}"
    if not 1 <= params.view_distance <= MAX_VIEW_DISTANCE:
        return f"view must be between 1 and {MAX_VIEW_DISTANCE}, got {params.view_distance}"
    return None
