"""The app's decision policies as agents of the environments: the built-in explorer, the random baseline, a
plug-in `package.module:Class`, or a model, each deciding on the DecisionContext a run would give it.

    from explorer.envs.app_policies import AppPolicies
    from explorer.envs.pettingzoo_env import ExplorationParallelEnv

    env = ExplorationParallelEnv(world="gen:house", world_seed=3, agents=3, seed=7)
    explorers = AppPolicies(env, "offline")  # or "random", "mypolicies:Forward", agents=["Agent1"], ...
    observations, infos = env.reset()
    while env.agents:
        observations, rewards, terminations, truncations, infos = env.step(explorers.actions())

Each agent's policy is made as a run makes it (explorer/run/policy_factory.py: the agent's own seed from the
episode's seed), afresh for each episode, and decides as a run's Decision node does: a `decide` that raises
makes the agent scan, and a decision is bounded, its action and message then the environment's. So the same
seed gives the app's episode: the same actions, poses and finds as a lock-step run with that --model. A
message goes to the whole team (the environment's action has no recipient), and no memories are retrieved.
Under a search task the built-in explorer takes the semantic prior as a run's does (explorer/run/search_prior.py),
from the embedding model the run's options name (`embedder`: one already loaded), loaded once, when first needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from explorer.config.run_config import RunConfig
from explorer.envs.episode import Episode
from explorer.model.client import CallGate
from explorer.records.errors import ConfigError
from explorer.run.policy_factory import make_policy
from explorer.run.prepare import start_embedder
from explorer.run.roster import roster_of
from explorer.run.search_prior import PriorPolicies, prior_wanted
from memory.embedder import SentenceEmbedder
from nodes.decision import carried_out, failed_decision
from nodes.decision_context import render_prompt
from nodes.interfaces import DecisionPolicy
from perception.actions import ACTIONS


class SteppedFromOutside(Protocol):
    """Either environment: both step an Episode."""

    episode: Episode


class AppPolicies:
    """One policy per agent (every agent of the environment, or those named), made from `model` as a run's."""

    def __init__(
        self,
        env: SteppedFromOutside,
        model: str = "offline",
        agents: Sequence[str] | None = None,
        embedder: SentenceEmbedder | None = None,
    ) -> None:
        self.episode, self.model, self.embedder = env.episode, model, embedder
        self.prior: PriorPolicies | None = None  # the built-in explorer's, under a search task: made once
        chosen = list(self.episode.agent_ids if agents is None else agents)
        unknown = [agent for agent in chosen if agent not in self.episode.agent_ids]
        if unknown or not chosen:
            raise ConfigError(f"agents must name some of {', '.join(self.episode.agent_ids)}, not {agents!r}")
        self.agents = chosen
        self._made_for = 0  # the episode its policies were made for
        self.policies: dict[str, DecisionPolicy] = {}
        self._make_policies()  # now: a model name that makes no policy is refused before the episode

    def actions(self) -> dict[str, Any]:
        """Each of its agents' action for the environment's next step (none once the episode is over)."""
        if self.episode.over:
            return {}
        if self._made_for != self.episode.number:
            self._make_policies()
        return {agent: self._action(agent) for agent in self.agents}

    def action(self) -> Any:
        """The action of its one agent (the Gymnasium environment's explorer)."""
        if len(self.agents) != 1:
            raise ValueError(f"action() is for one agent; these are {len(self.agents)}: use actions()")
        return self.actions().get(self.agents[0])

    def _make_policies(self) -> None:
        config = self.episode.config.with_options(model=self.model, seed=self.episode.seed).check()
        members = roster_of(config).members  # a plug-in is imported, and refused in one line, here
        factory = self._prior_policies(config) or make_policy
        gate = CallGate(config.calls.max_concurrency)  # as a run's: a bound on a model's calls in flight
        self.policies = {agent: factory(members[agent], agent, config, gate) for agent in self.agents}
        self._made_for = self.episode.number

    def _action(self, agent: str) -> Any:
        """The agent's decision on its context, as the environment's action."""
        context = self.episode.context(agent)
        try:
            outcome = self.policies[agent].decide(render_prompt(context), context)
        except Exception as error:
            outcome = failed_decision(error)
        decision = carried_out(outcome, context)
        index = ACTIONS.index(decision.action)
        return {"action": index, "message": decision.message_to_others} if self.episode.comm else index

    def _prior_policies(self, config: RunConfig) -> PriorPolicies | None:
        """The factory of a run's explorers under a search task (the semantic prior's), or None where a run
        would take none; the embedding model loaded as a run loads it, where none was given."""
        if self.prior is None and prior_wanted(config, self.episode.world):
            self.embedder = start_embedder(config, self.embedder)
            self.prior = PriorPolicies(make_policy, self.episode.world, self.embedder)
        return self.prior
