"""Who an explorer's messages reach, by the name `--comm` gives: each topology's traits.

Adding a topology is its entry here, and the routing it needs (explorer/team/hierarchy.py's groups, the
relays of explorer/policies/relay.py). Nothing outside this catalogue tests a topology's name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommTopology:
    name: str
    messages: bool  # agents message each other at all
    through_directors: bool  # an explorer's messages go only up, in its sight report; its coordinator relays them
    system_agent: bool  # coordinators pass messages on through the system agent above them


SILENT = "none"  # no messages: what --no-comm sets
TOPOLOGIES: dict[str, CommTopology] = {
    topology.name: topology
    for topology in (
        # every teammate
        CommTopology("all", messages=True, through_directors=False, system_agent=False),
        # the coordinator only, which passes on to each explorer what concerns it
        CommTopology("star", messages=True, through_directors=True, system_agent=False),
        # explorer to coordinator to system agent and down again
        CommTopology("tree", messages=True, through_directors=True, system_agent=True),
        CommTopology(SILENT, messages=False, through_directors=False, system_agent=False),
    )
}
