"""The classical explorers by name: `--model NAME` chooses one, as `offline` and `random` are chosen."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from explorer.policies.classical.hungarian import HUNGARIAN_FRONTIER
from explorer.policies.classical.mtsp import MTSP_FRONTIER
from explorer.policies.classical.nearest import NEAREST_FRONTIER
from explorer.policies.classical.planner import Planner
from explorer.policies.classical.utility import UTILITY_FRONTIER
from explorer.policies.classical.voronoi import VORONOI_FRONTIER

PLANNERS: Mapping[str, Planner] = MappingProxyType(
    {
        planner.name: planner
        for planner in (NEAREST_FRONTIER, UTILITY_FRONTIER, HUNGARIAN_FRONTIER, VORONOI_FRONTIER, MTSP_FRONTIER)
    }
)
