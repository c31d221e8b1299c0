"""The team in a mock world as a PettingZoo `ParallelEnv` (the one module that imports pettingzoo).

    from explorer.envs.pettingzoo_env import ExplorationParallelEnv

    env = ExplorationParallelEnv(world="gen:house", world_seed=3, agents=3, seed=7)
    observations, infos = env.reset()
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)

The world, world seed, agents, seed, random starts, steps and messages are the run options of the same
names, read and checked as the command line's (a shipped world's name, a world file, or gen:FAMILY with its
parameters, gen:house?size=40x30); a bad value is a ConfigError, one line. Observations and
actions: explorer/envs/spaces.py. Rewards: explorer/envs/episode.py's `Rewards` (1 per object and 0.1 per
free cell the team had not seen, to the agent that saw it first, and 1 for a target of a search task the team
had not found). Every agent acts at each step; the episode is truncated for all after its steps (--steps, else
the world's max_steps), as a run ends, and terminates for all once a search task's targets are all found, as
a run ends then. `reset(seed=S)` places the agents as `--seed S` does (seed None: as the last reset did).
`render_mode` "ansi" or "rgb_array" renders the team's map (explorer/envs/render.py).

`AppTeammates(env, "offline", ["Agent2", "Agent3"])` is the same team with those agents played by the app's
policy (explorer/envs/app_policies.py): its agents are the others, to train or test among built-in teammates.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pettingzoo import ParallelEnv  # type: ignore[import-untyped]

from explorer.config.keywords import make_config
from explorer.envs.app_policies import AppPolicies
from explorer.envs.episode import AgentStep, Episode, Rewards
from explorer.envs.render import RENDER_FPS, RENDER_MODES, checked_render_mode, rendered
from explorer.envs.spaces import action_space, observation, observation_space, read_action
from explorer.records.errors import ConfigError
from perception.world import World


class ExplorationParallelEnv(ParallelEnv):
    """The explorers of a team, each an agent of the environment ("Agent1", ...)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "multi_agent_explorer_v0",
        "render_modes": list(RENDER_MODES),
        "render_fps": RENDER_FPS,
    }

    def __init__(
        self,
        world: str | Path = "apartment",
        agents: int = 2,
        seed: int = 42,
        world_seed: int | None = None,
        find: str | Sequence[str] = (),
        random_starts: bool = False,
        steps: int | None = None,
        comm: bool = True,
        rewards: Rewards | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.render_mode = checked_render_mode(render_mode)
        config = make_config(
            world=world,
            agents=agents,
            seed=seed,
            world_seed=world_seed,
            **({"find": find} if find else {}),
            random_starts=random_starts,
            steps=steps,
            comm=comm,
        )
        self.episode = Episode(config, rewards or Rewards())
        self.comm = comm
        self.possible_agents = list(self.episode.agent_ids)
        self.agents: list[str] = []

    @property
    def world(self) -> World:
        """The world the agents explore: its size, its objects, its view distance."""
        return self.episode.world

    @cached_property
    def _observation_spaces(self) -> dict[str, Any]:
        return {agent: observation_space(self.episode.world, self.comm) for agent in self.possible_agents}

    @cached_property
    def _action_spaces(self) -> dict[str, Any]:
        return {agent: action_space(self.comm) for agent in self.possible_agents}

    def observation_space(self, agent: str) -> Any:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self._action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        views = self.episode.reset(seed)
        self.agents = list(self.possible_agents)
        return self._observations(views), {agent: view.info() for agent, view in views.items()}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        views = self.episode.step({agent: read_action(action, self.comm) for agent, action in actions.items()})
        over = self.episode.over
        result = (
            self._observations(views),
            {agent: view.reward for agent, view in views.items()},
            dict.fromkeys(views, self.episode.done),
            dict.fromkeys(views, over and not self.episode.done),
            {agent: view.info() for agent, view in views.items()},
        )
        if over:
            self.agents = []
        return result

    def render(self) -> Any:
        """The team's map: text ("ansi"), an image ("rgb_array"), or None without a render_mode."""
        return rendered(self.episode, self.render_mode)

    def _observations(self, views: dict[str, AgentStep]) -> dict[str, Any]:
        return {agent: observation(self.episode.world, view, self.comm) for agent, view in views.items()}


class AppTeammates(ParallelEnv):
    """A team of which the app's policy `model` plays `teammates`: the environment's agents are the others."""

    metadata: ClassVar[dict[str, Any]] = ExplorationParallelEnv.metadata

    def __init__(self, env: ExplorationParallelEnv, model: str, teammates: Sequence[str]) -> None:
        self.env, self.app = env, AppPolicies(env, model, teammates)
        self.possible_agents = [agent for agent in env.possible_agents if agent not in self.app.agents]
        if not self.possible_agents:
            raise ConfigError("teammates must leave at least one agent to the environment's user")
        self.agents: list[str] = []
        self.render_mode = env.render_mode

    def observation_space(self, agent: str) -> Any:
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> Any:
        return self.env.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observations, infos = self.env.reset(seed, options)
        self.agents = list(self.possible_agents)
        return self._ours(observations), self._ours(infos)

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        results = self.env.step({**actions, **self.app.actions()})
        self.agents = [agent for agent in self.possible_agents if agent in self.env.agents]
        return tuple(self._ours(result) for result in results)

    def render(self) -> Any:
        return self.env.render()

    def _ours(self, per_agent: dict[str, Any]) -> dict[str, Any]:
        return {agent: value for agent, value in per_agent.items() if agent in self.possible_agents}
