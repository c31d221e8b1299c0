"""The action vocabulary shared by every perception backend: the 12 moves, turns and tilts an agent can make."""

ACTIONS = (
    "forward",
    "backward",
    "move_left",
    "move_right",
    "move_up",
    "move_down",
    "look_left",
    "look_right",
    "look_up",
    "look_down",
    "tilt_left",
    "tilt_right",
)

ACTION_HELP = {
    "forward": "move one cell ahead",
    "backward": "move one cell back",
    "move_left": "step one cell to the left without turning",
    "move_right": "step one cell to the right without turning",
    "move_up": "rise one level",
    "move_down": "descend one level",
    "look_left": "turn 90 degrees to the left",
    "look_right": "turn 90 degrees to the right",
    "look_up": "tilt the view up one level",
    "look_down": "tilt the view down one level",
    "tilt_left": "roll the head left",
    "tilt_right": "roll the head right",
}

# Taken when a decision cannot be read: turning scans new ground without
# walking blindly, unlike a random move.
SAFE_ACTIONS = ("look_right", "look_left", "look_up", "look_down")


def safe_action(available):
    """The scanning action to fall back on, among those available."""
    for action in SAFE_ACTIONS:
        if action in available:
            return action
    return available[0]
