"""The built-in policies by name: `--model NAME` (and `--coordinator NAME`) chooses one, and the rest of the code
asks its traits.

As a schedule is chosen from explorer/schedule/catalogue.py, a built-in policy is chosen here: its factory, made
from a `BuiltInSetup`, and what a run must know of it. Nothing outside this module tests a policy's name
(tests/test_architecture.py checks it). Any other name is a policy of the user's own (`package.module:Class`,
plugin.py) or a language model.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from explorer.policies.classical.catalogue import PLANNERS
from explorer.policies.classical.planner import FrontierExplorer, Planner
from explorer.policies.coordinator import OfflineCoordinator
from explorer.policies.explorer_goals import ExplorerGoals
from explorer.policies.offline import OfflineExplorer
from explorer.policies.plugin import is_plugin
from explorer.policies.semantic_prior import SemanticPrior
from nodes.decision_context import DecisionContext
from nodes.interfaces import CoordinatorPolicy, Decision, DecisionOutcome, DecisionPolicy

OFFLINE, RANDOM = "offline", "random"


@dataclass(frozen=True)
class BuiltInSetup:
    """What a built-in policy is made from."""

    agent_seed: int  # the run's seed and the agent's name made one (stable_seed)
    goals: bool = False  # --decide goals: the built-in explorer proposes goals, as a model would choose them
    prior: SemanticPrior | None = None  # a search task's weights on unseen ground, for a policy that takes one


@dataclass(frozen=True)
class PolicyKind:
    """A built-in policy: its factory and its traits."""

    make: Callable[[BuiltInSetup], DecisionPolicy]
    described: str = ""  # in --model's help, after its name
    decides_in_code: bool = True  # asks no model
    cpu_slot: bool = True  # decides holding one of the run's slots on the cores (nothing to wait for)
    search_prior: bool = False  # takes a search task's prior on unseen ground
    seed_free: bool = True  # deterministic whatever the seed: every decision follows from what it sees
    plans_team: bool = False  # a classical explorer: plans the team's assignment on the grid map itself


def stable_seed(*parts: object) -> int:
    """A seed that is the same on every run and platform (unlike hash())."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


class RandomPolicy:
    """A uniformly random available action each step: the baseline."""

    name = RANDOM
    reads_memories = False

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        # Seeded by step, so a retried call gives the same answer.
        rng = random.Random(stable_seed(self.seed, context.team.step))
        return DecisionOutcome(Decision(action=rng.choice(context.available_actions), reason="random baseline"))


def _offline(setup: BuiltInSetup) -> DecisionPolicy:
    explorer = OfflineExplorer(setup.prior)
    return ExplorerGoals(explorer) if setup.goals else explorer


def _random(setup: BuiltInSetup) -> DecisionPolicy:
    return RandomPolicy(setup.agent_seed)


def _classical(planner: Planner) -> PolicyKind:
    return PolicyKind(lambda setup: FrontierExplorer(planner), plans_team=True)


POLICIES: Mapping[str, PolicyKind] = MappingProxyType(
    {
        OFFLINE: PolicyKind(_offline, "built-in explorer, the default", search_prior=True),
        RANDOM: PolicyKind(_random, seed_free=False),
        **{name: _classical(planner) for name, planner in PLANNERS.items()},
    }
)
# The built-in coordinators: --coordinator NAME (any other name is a model's).
COORDINATORS: Mapping[str, Callable[[], CoordinatorPolicy]] = MappingProxyType({OFFLINE: OfflineCoordinator})


def built_in(model: str) -> PolicyKind | None:
    """The built-in policy `model` names; None for a plug-in's or a model's name."""
    return POLICIES.get(model)


def decides_in_code(model: str) -> bool:
    """True for a policy that asks no model: a built-in one, or a plug-in."""
    kind = POLICIES.get(model)
    return kind.decides_in_code if kind else is_plugin(model)


def seed_free(models: list[str], coordinator: str | None) -> bool:
    """Whether no decision of these explorers and coordinator depends on the run's seed."""
    kinds = [POLICIES.get(model) for model in models]
    return all(kind and kind.seed_free for kind in kinds) and (coordinator is None or coordinator in COORDINATORS)


def takes_cpu_slot(model: str) -> bool:
    """Whether the policy decides holding a slot on the cores: a model's or a plug-in's may wait on others."""
    kind = POLICIES.get(model)
    return bool(kind and kind.cpu_slot)


def plans_team(model: str) -> bool:
    kind = POLICIES.get(model)
    return bool(kind and kind.plans_team)


def not_a_coordinator(name: str) -> bool:
    """A built-in explorer's name given as --coordinator: it directs no one."""
    return name in POLICIES and name not in COORDINATORS


def model_help() -> str:
    """--model's help, made from the catalogue."""
    alone = [
        f"{name} ({kind.described})" if kind.described else name
        for name, kind in POLICIES.items()
        if not kind.plans_team
    ]
    classical = ", ".join(name for name, kind in POLICIES.items() if kind.plans_team)
    return (
        f"{', '.join(alone)}, a classical explorer ({classical}), a litellm model such as gpt-4o-mini, "
        "or a policy of your own: package.module:Class"
    )
