"""The semantic prior given to the built-in explorers of a run with a search task (explorer/policies/semantic_prior.py).

The table of how each target goes with each kind of room the world has is worked out once for the run,
from one batch of embeddings, when the first explorer is made; under --no-prior, without a task, or in a
world without rooms, the explorers are made as they always are.
"""

from __future__ import annotations

from explorer.config.profiles import Profile
from explorer.config.run_config import RunConfig
from explorer.model.client import CallGate
from explorer.policies.built_in import built_in
from explorer.policies.semantic_prior import SemanticPrior, kind_weights
from explorer.run.crew import PolicyFactory
from explorer.run.perception_setup import MockSetup, UnitySetup
from explorer.run.policy_factory import make_policy
from explorer.run.stop import RunFailed
from memory.embedder import EmbedderError, SentenceEmbedder
from nodes.interfaces import DecisionPolicy
from perception.world import World


class PriorPolicies:
    """A policy factory: a built-in policy that takes a search prior made with the run's, any other as `factory`
    makes it."""

    def __init__(self, factory: PolicyFactory, world: World, embedder: SentenceEmbedder) -> None:
        self.factory, self.world, self.embedder = factory, world, embedder
        self.table: dict[str, dict[str, float]] | None = None

    def __call__(self, profile: Profile, agent_id: str, config: RunConfig, gate: CallGate) -> DecisionPolicy:
        kind = built_in(profile.model)
        if not kind or not kind.search_prior:
            return self.factory(profile, agent_id, config, gate)
        if self.table is None:
            try:
                self.table = prior_table(self.world, self.embedder)
            except EmbedderError as error:
                raise RunFailed(f"the search prior needs the embedding model: {error}") from None
        return make_policy(profile, agent_id, config, gate, SemanticPrior(self.table))


def prior_table(world: World, embedder: SentenceEmbedder) -> dict[str, dict[str, float]]:
    """How each of the world's targets goes with each kind of room it has (semantic_prior.kind_weights)."""
    return kind_weights(embedder.encode, world.targets, {room.kind for room in world.rooms})


def with_search_prior(
    factory: PolicyFactory, config: RunConfig, setup: MockSetup | UnitySetup, embedder: SentenceEmbedder
) -> PolicyFactory:
    """`factory`, or under a search task in a world with rooms (and not --no-prior) the PriorPolicies over it."""
    if not isinstance(setup, MockSetup) or not prior_wanted(config, setup.world):
        return factory
    return PriorPolicies(factory, setup.world, embedder)


def prior_wanted(config: RunConfig, world: World) -> bool:
    """Whether the run's built-in explorers take the semantic prior: a search task in a world with rooms, and
    not --no-prior."""
    return config.episode.prior and bool(world.targets) and bool(world.rooms)
