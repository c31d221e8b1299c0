"""Policies of the environments' spaces (explorer/envs/space_policy.py), for the tests: one that keeps to the
contract, one that breaks it."""

from __future__ import annotations

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
