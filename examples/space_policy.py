"""A policy written against the environments' spaces (as a trained RL policy is), run as a plug-in:
`--model examples.space_policy:LookAhead`, or in the sweep examples/space_policy_sweep.yaml."""

from explorer.envs.space_policy import SpacePolicy
from explorer.envs.spaces import OFF_GRID, WALL
from perception.actions import ACTIONS

FORWARD, TURN = ACTIONS.index("forward"), ACTIONS.index("look_right")
AHEAD = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}  # facing (north, east, south, west) -> (row, column) step


class LookAhead(SpacePolicy):
    """Walks forward; turns right where the view shows a wall, or the world's edge, just ahead."""

    name = "look-ahead"

    def act(self, observation):
        view, facing = observation["view"], int(observation["pose"][3])
        middle = view.shape[0] // 2
        row, column = AHEAD[facing]
        blocked = view[middle + row, middle + column] in (WALL, OFF_GRID)
        action = TURN if blocked else FORWARD
        return {"action": action, "message": ""} if "messages" in observation else action
