"""A perception backend over a real game window: screenshots in, held keys out.

It knows nothing of the game's internals. What the agent sees is what a vision
model makes of a screenshot of its part of the window; where it is, is counted
from the actions it took (dead reckoning), since the game does not say.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from perception.base import (
    ActionResult,
    EnvironmentInfo,
    Observation,
    PerceptionInterface,
    PerceptionStopped,
    Pose,
)
from perception.geometry import apply_action
from perception.screenshots import save_screenshot
from perception.window import WindowError
from perception.windows import window_system

START_POSE = Pose(0, 0, 0, "north")


@dataclass(frozen=True)
class Sight:
    """What a vision model made of one screenshot."""

    caption: str
    objects: tuple[str, ...]
    model_calls: tuple[dict, ...] = ()  # one accounting dict per model call it took
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentView:
    """One agent's game window, its part of it, and its keys."""

    window: object  # perception.window.Window
    keymap: object  # perception.keymap.KeyMap
    region: tuple[int, int, int, int] | None = None  # x, y, width, height inside the window

    @property
    def bbox(self):
        """The screen box the agent sees: (left, top, right, bottom)."""
        if self.region is None:
            return self.window.bbox
        x, y, width, height = self.region
        left, top = self.window.x + x, self.window.y + y
        return (left, top, left + width, top + height)


class UnityPyAutoGUIPerception(PerceptionInterface):
    """Agents in a game window: `look[agent_id](png_path) -> Sight` is each agent's vision.

    Key presses go through one Keyboard, one agent at a time; screenshots and
    vision calls of different agents overlap.
    """

    def __init__(self, store, views, keyboard, look, screenshot_dir, windows=None, team=None):
        """`team`: every agent's id, where some play elsewhere (a team split across machines); each starts
        at the same dead-reckoned pose."""
        super().__init__(store)
        self.views = views
        self.keyboard = keyboard
        self.look = look
        self.screenshot_dir = Path(screenshot_dir)
        self.windows = windows or window_system()
        self._lock = threading.Lock()
        self._poses = {agent_id: START_POSE for agent_id in team or views}
        self._seen = {agent_id: () for agent_id in views}

    def available_actions(self, agent_id) -> tuple[str, ...]:
        return self.views[agent_id].keymap.available_actions

    def get_agent_state(self, agent_id) -> Pose:
        with self._lock:
            return self._poses[agent_id]

    def get_visible_objects(self, agent_id, position=None) -> list[str]:
        """What the agent's last screenshot showed; `position` cannot be looked from here."""
        with self._lock:
            return list(self._seen[agent_id])

    def observe(self, agent_id, step=None) -> Observation:
        """Screenshot the agent's view to <agent>_step<NNN>.png and ask its vision what is there.

        Safe to repeat: the same step writes the same file.
        """
        view = self.views[agent_id]
        self._check_window(view.window)
        path = self.screenshot_dir / f"{agent_id}_step{step or 0:03d}.png"
        save_screenshot(view.bbox, path, view.window.display)
        sight = self.look[agent_id](path)
        with self._lock:
            self._seen[agent_id] = sight.objects
        return Observation(
            self.get_agent_state(agent_id),
            sight.objects,
            sight.caption,
            image_path=str(path),
            model_calls=sight.model_calls,
            errors=sight.errors,
        )

    def execute_action(self, agent_id, action, params=None) -> ActionResult:
        """Hold the action's keys in the agent's window; an unmapped action is not executed."""
        view = self.views[agent_id]
        pose = self.get_agent_state(agent_id)
        binding = view.keymap.actions.get(action)
        if binding is None:
            return ActionResult(action, "unavailable", pose, f"{action!r} has no key in {view.keymap.path}: not executed")
        with self.keyboard.turn():
            refocused = self._focus(view.window)
            self.keyboard.hold(binding.keys, binding.hold)
        new_pose, outcome, _ = apply_action(pose, action, None, ())
        with self._lock:
            self._poses[agent_id] = new_pose
        detail = f"held {'+'.join(binding.keys)} for {binding.hold:g} s" + (" after refocusing the window" if refocused else "")
        return ActionResult(action, outcome, new_pose, detail)

    def _check_window(self, window):
        if not self.windows.window_exists(window):
            raise PerceptionStopped(f"the game window {window.title!r} is gone: the run stops")

    def _focus(self, window):
        """Give the window the keyboard if it lost it; True if it had to be refocused."""
        self._check_window(window)
        if self.windows.has_focus(window):
            return False
        try:
            self.windows.focus_window(window)
        except WindowError as error:
            raise PerceptionStopped(str(error)) from None
        return True

    def get_environment_info(self) -> EnvironmentInfo:
        titles = sorted({view.window.title for view in self.views.values()})
        return EnvironmentInfo(name=" and ".join(titles), dead_reckoned=True)
