"""Policies of the environments' spaces (explorer/envs/space_policy.py), for the tests: one that keeps to the
contract, one that keeps to it in an RL library's own types, and two that break it."""

from __future__ import annotations

import numpy as np

from explorer.envs.space_policy import SpacePolicy
from perception.actions import ACTIONS


class TurnAndWalk(SpacePolicy):
    """Forward, except at every third step of its pose's x plus y, where it turns: what it does follows the
    observation, so an observation made wrongly makes other steps."""

    name = "turn-and-walk"

    def act(self, observation):
        x, y = int(observation["pose"][0]), int(observation["pose"][1])
        action = ACTIONS.index("look_left") if (x + y) % 3 == 0 else ACTIONS.index("forward")
        return {"action": action, "message": "here"} if "messages" in observation else action


class Stray(SpacePolicy):
    """Returns an index past the last action."""

    def act(self, observation):
        return len(ACTIONS)


class AsPredicted(TurnAndWalk):
    """TurnAndWalk's actions, each written as an RL library writes one: a 0-d array (Stable-Baselines3's
    `predict`), an array of one element (a vectorised environment's), a numpy integer, in turn."""

    FORMS = (np.array, lambda index: np.array([index]), np.int64)

    def act(self, observation):
        chosen = super().act(observation)
        index = chosen["action"] if isinstance(chosen, dict) else chosen
        written = self.FORMS[int(observation["pose"][0]) % len(self.FORMS)](index)
        return {**chosen, "action": written} if isinstance(chosen, dict) else written


class Junk(SpacePolicy):
    """Returns an array that is no action: a whole grid of numbers, whose repr spans lines."""

    def act(self, observation):
        return np.zeros((30, 30), dtype=np.int64)
