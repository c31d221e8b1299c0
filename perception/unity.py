"""A perception backend over a real game window: screenshots in, held keys out.

It knows nothing of the game's internals. What the agent sees is what a vision
model makes of a screenshot of its part of the window; where it is, is counted
from the actions it took (dead reckoning), since the game does not say. What
an action did is read from the frames just before and after it: a move or a
turn that left the view unchanged was blocked, and is not counted.
"""

from __future__ import annotations

import threading
import time
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
from perception.keymap import KeyMap
from perception.screenshots import ScreenGrabber, save_png, view_change
from perception.window import Window, WindowError
from perception.windows import window_system

START_POSE = Pose(0, 0, 0, "north")
PAUSE_TAP_SECONDS = 0.1  # long enough for a game that reads its keys once a frame
PAUSE_WAIT_SECONDS = 600  # an agent waits this long at most for its window's other agents to decide


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

    window: Window
    keymap: KeyMap
    region: tuple[int, int, int, int] | None = None  # x, y, width, height inside the window

    @property
    def bbox(self) -> tuple[int, int, int, int]:
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

    def __init__(
        self, store, views, keyboard, look, screenshot_dir, windows=None, team=None, grabber=None, pause_key=None
    ):
        """`team`: every agent's id, where some play elsewhere (a team split across machines); each starts
        at the same dead-reckoned pose. `grabber` grabs screen boxes (perception.screenshots.ScreenGrabber).
        `pause_key`: pressed once a window's first agent starts to think (after its view is grabbed),
        and again once the last of them has decided, before the actions."""
        super().__init__(store)
        self.views = views
        self.keyboard = keyboard
        self.look = look
        self.screenshot_dir = Path(screenshot_dir)
        self.windows = windows or window_system()
        self.grabber = grabber or ScreenGrabber()
        self._lock = threading.Lock()
        self._poses = dict.fromkeys(team or views, START_POSE)
        self._seen = dict.fromkeys(views, ())
        self._presses = {}  # window id -> actions carried out in it so far
        self._after = {}  # agent id -> (its last after-frame's path, that window's presses then)
        self._steps = {}  # agent id -> the step it last observed in
        self.pause_key = pause_key
        self._pause_changed = threading.Condition(self._lock)
        self._thinking = {}  # window id -> the agents deciding while it is paused
        self._paused = set()  # window ids

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

        The after-frame of the agent's last action is the view, instead, when no action
        was carried out in its window since. Safe to repeat: the same step gives the same file.
        """
        view = self.views[agent_id]
        self._check_window(view.window)
        with self._lock:
            self._steps[agent_id] = step or 0
            after_path, presses = self._after.get(agent_id, (None, None))
            if presses != self._presses.get(view.window.id):
                after_path = None  # something was done in the window since: look again
        path = after_path or self.screenshot_dir / f"{agent_id}_step{step or 0:03d}.png"
        if after_path is None:
            save_png(self.grabber.grab(view.bbox, view.window.display), path)
        self._start_thinking(agent_id, view.window)
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
        """Hold the action's keys in the agent's window, and compare the frames just before and after;
        an unmapped action is not executed."""
        view = self.views[agent_id]
        pose = self.get_agent_state(agent_id)
        binding = view.keymap.actions.get(action)
        if binding is None:
            return ActionResult(
                action, "unavailable", pose, f"{action!r} has no key in {view.keymap.path}: not executed"
            )
        feedback = view.keymap.feedback
        if self._stop_thinking(agent_id, view.window):
            time.sleep(feedback.settle_seconds)  # the game shows play again, not its pause screen
        with self.keyboard.turn():
            refocused = self._focus(view.window)
            before_at = time.time()  # wall-clock times, to set beside a game's own log
            before = self.grabber.grab(view.bbox, view.window.display)
            self.keyboard.hold(binding.keys, binding.hold)
            with self._lock:
                presses = self._presses[view.window.id] = self._presses.get(view.window.id, 0) + 1
        time.sleep(feedback.settle_seconds)  # other agents' keys act on their own parts of the window
        after_at = time.time()
        after = self.grabber.grab(view.bbox, view.window.display)
        change = round(view_change(before, after, feedback.pixel_threshold), 4)
        frames = self._record_frames(agent_id, before, after, presses) | {
            "at": [round(before_at, 3), round(after_at, 3)]
        }
        held = f"held {'+'.join(binding.keys)} for {binding.hold:g} s" + (
            " after refocusing the window" if refocused else ""
        )
        if change < feedback.changed_share:
            detail = f"the view did not change ({held}; {change:.1%} of it changed)"
            return ActionResult(action, "blocked", pose, detail, view_change=change, frames=frames)
        new_pose, outcome, _ = apply_action(pose, action, None, ())
        with self._lock:
            self._poses[agent_id] = new_pose
        return ActionResult(action, outcome, new_pose, held, view_change=change, frames=frames)

    def _record_frames(self, agent_id, before, after, presses):
        """Keep both frames in screenshots/, named by the step the agent last observed in;
        the after-frame may be the next step's view."""
        with self._lock:
            step = self._steps.get(agent_id, 0)
        stem = self.screenshot_dir / f"{agent_id}_step{step:03d}"
        paths = {"before": f"{stem}_before.png", "after": f"{stem}_after.png"}
        save_png(before, paths["before"])
        save_png(after, paths["after"])
        with self._lock:
            self._after[agent_id] = (Path(paths["after"]), presses)
        return paths

    def _start_thinking(self, agent_id, window):
        """Pause the window's game, unless one of its agents already did."""
        if self.pause_key is None:
            return
        with self._lock:
            self._thinking.setdefault(window.id, set()).add(agent_id)
            if window.id in self._paused:
                return
            self._paused.add(window.id)
        self._tap_pause(window)

    def _stop_thinking(self, agent_id, window) -> bool:
        """Wait until no agent of the window is deciding, then resume its game once; True if this call did."""
        if self.pause_key is None:
            return False
        with self._pause_changed:
            thinking = self._thinking.setdefault(window.id, set())
            thinking.discard(agent_id)
            self._pause_changed.notify_all()
            # An agent that stopped without acting must not hold the rest for ever.
            self._pause_changed.wait_for(lambda: not thinking, timeout=PAUSE_WAIT_SECONDS)
            if window.id not in self._paused:
                return False
            self._paused.discard(window.id)
        self._tap_pause(window)
        return True

    def _tap_pause(self, window):
        """Press the pause key in the window; it counts as something done there (its frames are stale)."""
        with self.keyboard.turn():
            self._focus(window)
            self.keyboard.hold((self.pause_key,), PAUSE_TAP_SECONDS)
            with self._lock:
                self._presses[window.id] = self._presses.get(window.id, 0) + 1

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
