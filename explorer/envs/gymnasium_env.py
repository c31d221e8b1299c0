"""One explorer alone in a mock world, as a Gymnasium environment (gymnasium itself is reached through
explorer/envs/spaces.py).

    import gymnasium

    env = gymnasium.make("explorer.envs.gymnasium_env:multi_agent_explorer/Explore-v0", world="office", seed=7)
    observation, info = env.reset()
    observation, reward, terminated, truncated, info = env.step(env.action_space.sample())

The PettingZoo environment's Agent1 with no team: the same options (but `agents`, which is 1, and `comm`,
which is off), observations without `messages`, and an action that is the index of one of ACTIONS.

Importing this module registers it as ENV_ID: Gymnasium 1.x finds third-party environments no other way
(it reads no entry points), and `gymnasium.make("explorer.envs.gymnasium_env:" + ENV_ID)` imports it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from explorer.config.keywords import make_config
from explorer.envs.episode import AgentStep, Episode, Rewards
from explorer.envs.render import RENDER_FPS, RENDER_MODES, checked_render_mode, rendered
from explorer.envs.spaces import Env, action_space, observation, observation_space, read_action, register

ENV_ID = "multi_agent_explorer/Explore-v0"


class ExplorationEnv(Env):
    """One explorer: reward, observation and action as one agent's of the PettingZoo environment."""

    # gymnasium.Env declares it an instance variable
    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}  # noqa: RUF012

    def __init__(
        self,
        world: str | Path = "apartment",
        seed: int = 42,
        world_seed: int | None = None,
        find: str | Sequence[str] = (),
        random_starts: bool = False,
        steps: int | None = None,
        rewards: Rewards | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.render_mode = checked_render_mode(render_mode)
        config = make_config(
            world=world,
            agents=1,
            seed=seed,
            world_seed=world_seed,
            **({"find": find} if find else {}),
            random_starts=random_starts,
            steps=steps,
            comm=False,
        )
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
        done = self.episode.done
        return self._observation(view), view.reward, done, self.episode.over and not done, view.info()

    def render(self) -> Any:
        """The explorer's map: text ("ansi"), an image ("rgb_array"), or None without a render_mode."""
        return rendered(self.episode, self.render_mode)

    def _observation(self, view: AgentStep) -> dict[str, Any]:
        return observation(self.episode.world, view, comm=False)


register(ENV_ID, f"{__name__}:ExplorationEnv")
