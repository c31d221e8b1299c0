"""The policy each member of a run decides with, behind one seam (`decide(prompt, context) -> DecisionOutcome`,
nodes/interfaces.py): a built-in one from the catalogue (explorer/policies/built_in.py), a policy of the user's
own (`package.module:Class`, explorer/policies/plugin.py), or else a language model reached through litellm.
"""

from __future__ import annotations

import threading
from functools import partial

from explorer.config.call_options import GOALS, OFFLINE_FALLBACK
from explorer.config.profiles import Profile
from explorer.config.run_config import RunConfig
from explorer.config.team_options import COORDINATOR
from explorer.model.client import CallGate, LLMSettings, complete_prompt, reply_syntax, takes_response_schema
from explorer.model.replay import RecordedReplies
from explorer.model.reply_format import YAML, ReplyFormat
from explorer.policies.built_in import COORDINATORS, BuiltInSetup, built_in, stable_seed
from explorer.policies.coordinator import ModelCoordinator
from explorer.policies.fallback import OfflineFallback
from explorer.policies.goals import GoalPolicy
from explorer.policies.model_policy import ModelPolicy
from explorer.policies.plugin import CallLimits, PolicySetup, is_plugin, make_plugin
from explorer.policies.semantic_prior import SemanticPrior
from nodes.interfaces import CoordinatorPolicy, DecisionPolicy


def make_policy(
    profile: Profile, agent_id: str, config: RunConfig, gate: CallGate | None = None, prior: SemanticPrior | None = None
) -> DecisionPolicy:
    """The policy an agent's profile asks for; `config` gives the run's seed and model settings, `gate` the
    semaphore that bounds the run's model calls in flight, `prior` a search task's (for a policy that takes one)."""
    agent_seed = stable_seed(config.episode.seed, agent_id)
    kind = built_in(profile.model)
    if kind:
        return kind.make(BuiltInSetup(agent_seed, config.calls.decide == GOALS, prior if kind.search_prior else None))
    if is_plugin(profile.model):
        cancelled = gate.cancelled if gate else threading.Event()
        return make_plugin(
            profile.model, PolicySetup(agent_id, agent_seed), CallLimits(config.calls.timeout, cancelled)
        )
    settings = model_settings(profile, config, agent_id, gate)
    ask, syntax = partial(complete_prompt, settings), partial(reply_syntax, settings)
    policy: DecisionPolicy
    if config.calls.decide == GOALS:
        policy = GoalPolicy(profile.model, ask, constrained=True, syntax=syntax)
    else:
        policy = ModelPolicy(profile.model, ask, constrained=True, syntax=syntax)
    return OfflineFallback(policy) if config.calls.fallback == OFFLINE_FALLBACK else policy


def make_coordinator(profile: Profile, config: RunConfig, gate: CallGate | None = None) -> CoordinatorPolicy:
    """The coordinator's policy: the built-in one, or a model (its profile's model is --coordinator)."""
    offline = COORDINATORS.get(profile.model)
    if offline:
        return offline()
    settings = model_settings(profile, config, COORDINATOR, gate)
    return ModelCoordinator(
        profile.model, partial(complete_prompt, settings), constrained=True, syntax=partial(reply_syntax, settings)
    )


def model_settings(profile: Profile, config: RunConfig, agent_id: str, gate: CallGate | None = None) -> LLMSettings:
    """The model client's settings for an agent's profile: every model call is made with them, so under
    --replay-replies the agent's recorded replies answer them all."""
    return LLMSettings(
        model=profile.model,
        api_base=config.calls.api_base,
        temperature=profile.temperature,
        timeout=config.calls.timeout,
        price_in=config.calls.price_in,
        price_out=config.calls.price_out,
        gate=gate,
        replay=RecordedReplies(config.calls.replay_replies, agent_id) if config.calls.replay_replies else None,
        reply_format=reply_format(profile, config),
    )


def reply_format(profile: Profile, config: RunConfig) -> ReplyFormat:
    """The agent's reply format: its profile's, else --reply-format. A replay asks no model, so it
    learns nothing: its replies carry the formats the recorded run used."""
    model = profile.model or config.calls.model
    requested = YAML if config.calls.replay_replies else profile.reply_format or config.calls.reply_format
    schema_known = takes_response_schema(model) if requested == "auto" else None
    return ReplyFormat(requested, model, schema_known, own_server=config.calls.api_base is not None)
