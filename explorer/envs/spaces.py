"""The environments' spaces, and the observations and actions that fill them: the one module that imports
gymnasium (the environments subclass its `Env` from here, and register the Gymnasium one with `register`).

An observation is a Dict:
- `view`: the cells around the agent, a (2R + 1) x (2R + 1) array of int8 for the world's view distance R,
  north up: `view[R - dy, R + dx]` is the cell (x + dx, y + dy) on the level the agent looks at
  (z + pitch). Each cell is UNSEEN (0, not in sight now), FREE (1), WALL (2), OBJECT (3, an object in
  sight stands there) or OFF_GRID (4, outside the world).
- `pose`: int64 [x, y, z, facing (0 north, 1 east, 2 south, 3 west), pitch, roll].
- `caption`: what the agent sees, in words, as the app's prompt says it (at most CAPTION_CHARS).
- `messages` (with messages on): the teammates' messages of the step just taken, one `Agent2: "text"` a line,
  each quoted as a prompt shows it (nodes/decision_context.py's `said_by`: no message opens a line).
Text is printable ASCII and new lines; any other character is shown as '?'.

An action is the index of one of the 12 actions (perception/actions.py's ACTIONS, in order) or, with
messages on, a Dict of that `action` and a `message` to the whole team ("" sends none). The index is any
value the action space's `contains` takes as one: an int, a numpy integer, an integer array of one element.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import gymnasium
import numpy as np
from gymnasium import spaces

from explorer.envs.episode import AgentStep
from nodes.decision_context import CAPTION_CHARS, MESSAGE_CHARS, PROMPT_MESSAGES, said_by
from perception.actions import ACTIONS
from perception.base import FACINGS, Pose
from perception.world import World

Env = gymnasium.Env
register = gymnasium.register
UNSEEN, FREE, WALL, OBJECT, OFF_GRID = range(5)
CHARSET = frozenset(chr(code) for code in range(32, 127)) | {"\n"}
SENDER_CHARS = 14  # 'Agent1000: ', the message's two quotes and its new line
MESSAGES_CHARS = PROMPT_MESSAGES * (MESSAGE_CHARS + SENDER_CHARS)  # the newest PROMPT_MESSAGES, as a prompt shows


def _text(max_length: int) -> spaces.Text:
    return spaces.Text(max_length, min_length=0, charset=CHARSET)


def observation_space(world: World, comm: bool) -> spaces.Dict:
    """An agent's observations in `world`."""
    side = 2 * world.view_distance + 1
    parts: dict[str, spaces.Space[Any]] = {
        "view": spaces.Box(UNSEEN, OFF_GRID, shape=(side, side), dtype=np.int8),
        "pose": spaces.Box(
            np.array([0, 0, 0, 0, -1, -1]),
            np.array([world.width - 1, world.depth - 1, world.height - 1, len(FACINGS) - 1, 1, 1]),
            dtype=np.int64,
        ),
        "caption": _text(CAPTION_CHARS),
    }
    if comm:
        parts["messages"] = _text(MESSAGES_CHARS)
    return spaces.Dict(parts)


def action_space(comm: bool) -> spaces.Space[Any]:
    """An agent's actions: one of ACTIONS, with a message to the team where messages are on."""
    choice = spaces.Discrete(len(ACTIONS))
    return spaces.Dict({"action": choice, "message": _text(MESSAGE_CHARS)}) if comm else choice


def read_action(action: Any, comm: bool) -> tuple[str, str]:
    """(the action's name, the message: "" for none) of an action of the space; ValueError for another."""
    message = ""
    if isinstance(action, Mapping):
        if not comm and action.get("message"):
            raise ValueError("messages are off (comm=False): an action is the index of one of ACTIONS")
        action, message = action.get("action"), action.get("message") or ""
        if not isinstance(message, str):
            raise ValueError(f"a message is text, not {shown(message)}")
    index = _index(action)
    if index is None or not 0 <= index < len(ACTIONS):
        raise ValueError(f"an action is the index of one of the {len(ACTIONS)} ACTIONS, not {shown(action)}")
    return ACTIONS[index], _printable(message, MESSAGE_CHARS)


def _index(action: Any) -> int | None:
    """The index an action gives as the ecosystem writes it: an int, a numpy integer, or an integer array of
    one element (0-d, or of shape (1,), as Stable-Baselines3's `predict` gives it); None for anything else.
    True is an int to Python: as an action it is a mistake, not the index 1."""
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
        action = action.item()
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return None
    return int(action)


def shown(value: Any, limit: int = 60) -> str:
    """A value as one line of at most about `limit` characters, for an error's message (an array's repr spans
    lines, and may be long)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit] + "..."


class Seen(Protocol):
    """What a pose shows, as an Observation (perception/base.py) and a DecisionContext's View both hold it."""

    @property
    def pose(self) -> Pose: ...
    @property
    def caption(self) -> str: ...
    @property
    def seen_cells(self) -> Sequence[tuple[int, int, int]]: ...
    @property
    def seen_walls(self) -> Sequence[tuple[int, int]]: ...
    @property
    def object_cells(self) -> Mapping[str, tuple[int, int, int]]: ...


def observation(world: World, step: AgentStep, comm: bool) -> dict[str, Any]:
    """The observation of an agent's step."""
    heard = [(m.sender, m.message) for m in step.messages] if comm else None
    return observation_of(step.observation, (world.width, world.depth), world.view_distance, heard)


def observation_of(
    seen: Seen, area: tuple[int, int], reach: int, heard: Sequence[tuple[str, str]] | None
) -> dict[str, Any]:
    """The observation of what `seen` shows in a world `area` = (width, depth) cells wide and deep, with view
    distance `reach`; `heard` is the (sender, message) read, None where messages are off."""
    pose = seen.pose
    shown: dict[str, Any] = {
        "view": view_array(seen, area, reach),
        "pose": np.array([pose.x, pose.y, pose.z, FACINGS.index(pose.facing), pose.pitch, pose.roll], dtype=np.int64),
        "caption": _printable(seen.caption, CAPTION_CHARS),
    }
    if heard is not None:
        lines = [_printable(said_by(sender, text, MESSAGE_CHARS)) for sender, text in heard[-PROMPT_MESSAGES:]]
        shown["messages"] = "\n".join(lines)[:MESSAGES_CHARS]
    return shown


def view_array(seen: Seen, area: tuple[int, int], reach: int) -> np.ndarray:
    """The cells around the agent, north up (see the module's docstring)."""
    pose, (width, depth) = seen.pose, area
    view = np.full((2 * reach + 1, 2 * reach + 1), UNSEEN, dtype=np.int8)

    def mark(x: int, y: int, code: int) -> None:
        if abs(x - pose.x) <= reach and abs(y - pose.y) <= reach:
            view[reach - (y - pose.y), reach + (x - pose.x)] = code

    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            if not (0 <= pose.x + dx < width and 0 <= pose.y + dy < depth):
                mark(pose.x + dx, pose.y + dy, OFF_GRID)
    for x, y, _ in seen.seen_cells:
        mark(x, y, FREE)
    for x, y in seen.seen_walls:
        mark(x, y, WALL)
    for x, y, _ in seen.object_cells.values():
        mark(x, y, OBJECT)
    return view


def _printable(text: str, limit: int | None = None) -> str:
    return "".join(c if c in CHARSET else "?" for c in text[:limit])
