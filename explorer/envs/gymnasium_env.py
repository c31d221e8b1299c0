"""One explorer alone in a mock world, as a Gymnasium environment (gymnasium itself is reached through
explorer/envs/spaces.py).

    from explorer.envs.gymnasium_env import ExplorationEnv

    env = ExplorationEnv(world="office", seed=7)
    observation, info = env.reset()
    observation, reward, terminated, truncated, info = env.step(env.action_space.sample())

The PettingZoo environment's Agent1 with no team: the same options (but `agents`, which is 1, and `comm`,
which is off), observations without `messages`, and an action that is the index of one of ACTIONS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explorer.config.keywords import make_config
from explorer.envs.episode import AgentStep, Episode, Rewards
from explorer.envs.spaces import Env, action_space, observation, observation_space, read_action


class ExplorationEnv(Env):
    """One explorer: reward, observation and action as one agent's of the PettingZoo environment."""

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium.Env declares it an instance variable)

    def __init__(
        self,
        world: str | Path = "apartment",
        seed: int = 42,
        world_seed: int | None = None,
        steps: int | None = None,
        rewards: Rewards | None = None,
    ) -> None:
        config = make_config(world=world, agents=1, seed=seed, world_seed=world_seed, steps=steps, comm=False)
        self.episode = Episode(config, rewards or Rewards())
        (self.agent,) = self.episode.agent_ids
        self.observation_space = observation_space(self.episode.world, comm=False)
        self.action_space = action_space(comm=False)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        view = self.episode.reset(seed)[self.agent]  # first: it refuses a seed that is no whole number in one line
        super().reset(seed=seed)
        return self._observation(view), view.info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        view = self.episode.step({self.agent: read_action(action, comm=False)})[self.agent]
        return self._observation(view), view.reward, False, self.episode.over, view.info()

    def _observation(self, view: AgentStep) -> dict[str, Any]:
        return observation(self.episode.world, view, comm=False)
