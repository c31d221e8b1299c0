"""A policy written against the environments' spaces, run by the app as any plug-in: `--model
package.module:Class` in a run, a profile or a sweep.

    from explorer.envs.space_policy import SpacePolicy

    class Forward(SpacePolicy):
        name = "forward"

        def act(self, observation):
            return 0  # the index of ACTIONS' "forward"; with messages on, {"action": 0, "message": ""}

Subclass `SpacePolicy` and give `act(observation) -> action`: the observation is the one the environments
give this agent at this step (explorer/envs/spaces.py: `view`, `pose`, `caption`, and `messages` where
messages are on), made from the DecisionContext the run gives it; the action is one of the environment's
action space. A trained RL policy loads its weights in `__init__(setup)` (call `super().__init__(setup)`)
and predicts in `act`. It needs a mock world (the view is the grid's). Like every policy it must answer the
same when asked again for the same step. An action that is none of the space's stops the run in one line
(exit code 2); an exception `act` raises makes the agent scan for the step, as `decide`'s does.
"""

from __future__ import annotations

from typing import Any

from explorer.envs.spaces import observation_of, read_action, shown
from explorer.policies.plugin import PolicySetup, plugin_name
from nodes.decision_context import DecisionContext
from nodes.interfaces import Decision, DecisionOutcome, StopRun


class SpacePolicy:
    """A DecisionPolicy (nodes/interfaces.py) that decides through `act(observation) -> action`."""

    reads_memories = False  # an observation holds none

    def __init__(self, setup: PolicySetup) -> None:
        self.setup = setup  # the agent's id and its own seed

    @property
    def name(self) -> str:
        """The trace's and summary's name for it: a subclass's `name`, else its class's."""
        return type(self).__name__

    def act(self, observation: dict[str, Any]) -> Any:
        """The environment's action for its observation."""
        raise NotImplementedError(f"{type(self).__name__} gives no act(observation)")

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        action = self.act(observation_from(context, plugin_name(type(self))))
        try:
            name, message = read_action(action, context.setup.comm_enabled)
        except ValueError as error:
            raise StopRun(
                f"--model {plugin_name(type(self))}: act returned {shown(action)}: {error}", users_mistake=True
            ) from None
        return DecisionOutcome(Decision(action=name, reason=f"act: {name}", message_to_others=message))


def observation_from(context: DecisionContext, model: str) -> dict[str, Any]:
    """The environments' observation of the step `context` is for; StopRun outside a mock world."""
    size, reach = context.team.size, context.team.view_distance
    if size is None or reach is None:  # a game window's world has no grid
        raise StopRun(f"--model {model}: a policy of the environments' spaces needs a mock world", users_mistake=True)
    heard = [(m["sender"], m["message"]) for m in context.teammates.messages] if context.setup.comm_enabled else None
    return observation_of(context.view, size[:2], reach, heard)
