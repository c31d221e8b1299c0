"""Decision policies behind one seam, `decide(prompt, context) -> DecisionOutcome` (nodes/interfaces.py).

The built-in offline explorer, the random baseline and the classical explorers (explorer/policies/classical/)
decide in code and make no model calls, as does a policy of the user's own (`package.module:Class`,
explorer/policies/plugin.py); any other name is a language model reached through litellm.
"""

from __future__ import annotations

import hashlib
import random
import threading
from functools import partial

from explorer.config.profiles import Profile
from explorer.config.run_config import COORDINATOR, GOALS, RunConfig
from explorer.model.client import CallGate, LLMSettings, complete_prompt, takes_response_schema
from explorer.model.replay import RecordedReplies
from explorer.model.reply_format import YAML, ReplyFormat
from explorer.policies.classical.catalogue import PLANNERS
from explorer.policies.classical.planner import FrontierExplorer
from explorer.policies.coordinator import ModelCoordinator, OfflineCoordinator
from explorer.policies.explorer_goals import ExplorerGoals
from explorer.policies.fallback import OfflineFallback
from explorer.policies.goals import GoalPolicy
from explorer.policies.model_policy import ModelPolicy
from explorer.policies.offline import OfflineExplorer
from explorer.policies.plugin import CallLimits, PolicySetup, is_plugin, make_plugin
from nodes.decision_context import DecisionContext
from nodes.interfaces import CoordinatorPolicy, Decision, DecisionOutcome, DecisionPolicy

OFFLINE, RANDOM = "offline", "random"
CLASSICAL = tuple(PLANNERS)  # nearest-frontier, utility-frontier, hungarian-frontier, voronoi-frontier, mtsp-frontier
BUILT_IN = (OFFLINE, RANDOM, *CLASSICAL)
# The built-in policies whose every decision follows from what they see: a run's seed changes none of them.
SEED_FREE = (OFFLINE, *CLASSICAL)


def decides_in_code(model: str) -> bool:
    """True for a policy that asks no model: a built-in one, or a plug-in."""
    return model in BUILT_IN or is_plugin(model)


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


def make_policy(profile: Profile, agent_id: str, config: RunConfig, gate: CallGate | None = None) -> DecisionPolicy:
    """The policy an agent's profile asks for; `config` gives the run's seed and model settings,
    `gate` the semaphore that bounds the run's model calls in flight."""
    agent_seed = stable_seed(config.seed, agent_id)
    if profile.model == OFFLINE:
        return ExplorerGoals() if config.decide == GOALS else OfflineExplorer()
    if profile.model == RANDOM:
        return RandomPolicy(agent_seed)
    if profile.model in PLANNERS:
        return FrontierExplorer(PLANNERS[profile.model])
    if is_plugin(profile.model):
        cancelled = gate.cancelled if gate else threading.Event()
        return make_plugin(profile.model, PolicySetup(agent_id, agent_seed), CallLimits(config.timeout, cancelled))
    ask = partial(complete_prompt, model_settings(profile, config, agent_id, gate))
    policy: DecisionPolicy
    if config.decide == GOALS:
        policy = GoalPolicy(profile.model, ask, constrained=True)
    else:
        policy = ModelPolicy(profile.model, ask, constrained=True)
    return OfflineFallback(policy) if config.fallback == OFFLINE else policy


def make_coordinator(profile: Profile, config: RunConfig, gate: CallGate | None = None) -> CoordinatorPolicy:
    """The coordinator's policy: the built-in one, or a model (its profile's model is --coordinator)."""
    if profile.model == OFFLINE:
        return OfflineCoordinator()
    ask = partial(complete_prompt, model_settings(profile, config, COORDINATOR, gate))
    return ModelCoordinator(profile.model, ask, constrained=True)


def model_settings(profile: Profile, config: RunConfig, agent_id: str, gate: CallGate | None = None) -> LLMSettings:
    """The model client's settings for an agent's profile: every model call is made with them, so under
    --replay-replies the agent's recorded replies answer them all."""
    return LLMSettings(
        model=profile.model,
        api_base=config.api_base,
        temperature=profile.temperature,
        timeout=config.timeout,
        price_in=config.price_in,
        price_out=config.price_out,
        gate=gate,
        replay=RecordedReplies(config.replay_replies, agent_id) if config.replay_replies else None,
        reply_format=reply_format(profile, config),
    )


def reply_format(profile: Profile, config: RunConfig) -> ReplyFormat:
    """The agent's reply format: its profile's, else --reply-format. A replay asks no model, so it
    learns nothing: its replies carry the formats the recorded run used."""
    model = profile.model or config.model
    requested = YAML if config.replay_replies else profile.reply_format or config.reply_format
    return ReplyFormat(requested, model, takes_response_schema(model) if requested == "auto" else None)
