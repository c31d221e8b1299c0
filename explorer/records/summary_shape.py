"""The shape of the summary.json fields a sweep reads, checked before they are added up: a run directory's
summary may be damaged or written by hand, and one of the wrong shape must cost one line naming its run and
field, never the sweep's results.

Every field may be missing or null (a run that had no such figure); where it is given, it is of its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from explorer.records.shapes import Shape, count, list_of, mapping_of, nullable, number, record, text

_PAIRS = list_of(list_of(number, 2, 2))  # [[step, value], ...]: the curves
_STEPS_TO = mapping_of(nullable(count))  # {"90%": step, ...}, {target: step, ...}
# Dotted paths, each parent before its fields: a field is looked at only where its parent is an object.
FIELDS: Mapping[str, Shape] = MappingProxyType(
    {
        "status": text,
        "steps": mapping_of(nullable(count)),
        "objects_discovered": list_of(text),
        "total_objects": count,
        "coverage": number,
        "wall_seconds": number,
        "discovery_curve": _PAIRS,
        "team": record(),
        **{f"team.{name}": _STEPS_TO for name in ("steps_to_objects", "steps_to_cells", "distance_to_cells")},
        "team.seconds_to_objects": mapping_of(nullable(number)),
        **{f"team.{name}": count for name in ("cells_seen", "total_cells")},
        **{f"team.{name}": _PAIRS for name in ("cells_curve", "messages_curve", "cells_by_distance")},
        **{
            f"team.{name}": number
            for name in ("distance", "overlap_ratio", "messages_per_agent_step", "messages_read_per_agent_step")
        },
        "team.message_chars_read_per_agent_step": number,
        "llm": record(),
        **{f"llm.{name}": count for name in ("calls", "prompt_tokens", "completion_tokens", "parse_failures")},
        "llm.errors": count,
        "llm.cost_usd": number,
        "search": record(),
        "search.targets": list_of(text),
        "search.steps_to_target": _STEPS_TO,
        "search.steps_to_all": count,
        "search.spl": number,
    }
)


def misshapen_field(summary: Mapping[str, Any]) -> str | None:
    """The first field of `summary` (dotted: `team.cells_curve`) not of its shape; None where all are."""
    for path, shape in FIELDS.items():
        value = _at(summary, path)
        if value is not None and not shape(value):
            return path
    return None


def _at(summary: Mapping[str, Any], path: str) -> Any:
    """The value at the dotted `path`; None where it or a parent is missing or not an object."""
    value: Any = summary
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value
