"""A limit for the benches: the built-in explorer told the whole map of its world at its first step (every
wall, every free cell's place and, with a search prior, every room), but not where anything is. What it
still needs over the full-knowledge team is what not knowing where the objects are costs this planner;
what the explorer needs over it is what finding the map costs."""

from __future__ import annotations

from explorer.policies.grid_map import PoseKey
from explorer.policies.offline import OfflineExplorer
from explorer.policies.semantic_prior import SemanticPrior
from nodes.decision_context import DecisionContext
from perception.world import World


class KnownMapExplorer(OfflineExplorer):
    """The built-in explorer (with `prior`, if any), told every wall and room of `world` at its first step."""

    def __init__(self, world: World, prior: SemanticPrior | None = None) -> None:
        if prior is not None:
            for room in world.rooms:
                prior.known.add(room)
        super().__init__(prior)
        self.world = world
        self.told = False

    def observe(self, context: DecisionContext) -> PoseKey:
        pose = super().observe(context)  # the map learns the world's size from the first view
        if not self.told:
            self.told = True
            for wall in sorted(self.world.walls):
                self.map.add_wall(wall)
            self.map.learn_open({cell[:2] for cell in self.world.free_cells()})
        return pose


def known_map_policies(world: World):
    """A policy factory: KnownMapExplorers, without a prior."""
    return lambda *_: KnownMapExplorer(world)
