"""The perception backend as agents on a simulated clock meet it: views that are late, actions that land late.

The event schedule (explorer/schedule/event.py) owns the clock; this wrapper
keeps what the delays need. Each agent's poses are kept with the time each
took effect (the state history), so a view `obs_delay` old is the view from
the pose the agent had then: the mock world is still, so that pose shows what
it showed then. An action chosen with an `act_delay` is queued, handed to the
schedule with the tick, and applied by it when its time comes; until then the
agent's pose is unchanged, and its next views say what is still on its way
and what has landed since.

An agent with a think time (a profile's think_time) has every action queued
so: its decision takes simulated time, which the schedule knows only once the
step is handed in, so it times the action then (`take_queued`).

With no delays and no think time it is the backend itself: the same views, the same moves, at once.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace

from explorer.schedule.wrapped import WrappedPerception
from perception.base import ActionResult, Message, Observation, Pose
from perception.mock import MockPerception

PENDING = "pending"  # the outcome of an action chosen but not yet carried out
MEASURED = "measured"  # a think time: the decision's own, as measured (the model calls' latency)


@dataclass(frozen=True)
class Timing:
    """An agent's clock, in simulated seconds (the profiles file sets them)."""

    tick_interval: float = 1.0
    obs_delay: float = 0.0
    act_delay: float = 0.0
    msg_delay: float = 0.0
    think_time: float | str = 0.0  # seconds a decision takes, or MEASURED

    @property
    def thinks(self) -> bool:
        """Whether its decisions take simulated time."""
        return self.think_time != 0


@dataclass(frozen=True)
class LateAction:
    action: str
    chosen_at: float
    due: float


def time_text(t: float) -> str:
    return f"t={t:g}"


class TimedPerception(WrappedPerception):
    def __init__(self, backend: MockPerception, timings: Mapping[str, Timing]) -> None:
        """`backend` is the mock world: still, so a pose the agent once had shows what it showed then."""
        super().__init__(backend)
        self.backend: MockPerception = backend
        self.timings = timings
        self._lock = threading.Lock()
        self._now = dict.fromkeys(timings, 0.0)  # the time of each agent's tick under way
        # (time it took effect, pose, the action that led there: "" for the start), oldest first; a tick
        # at t sees what took effect before t.
        self._poses: dict[str, list[tuple[float, Pose, str]]] = {
            agent_id: [(-math.inf, backend.get_agent_state(agent_id), "")] for agent_id in timings
        }
        # Chosen this tick, not yet with the schedule; with the schedule, not yet applied.
        self._queued: dict[str, list[LateAction]] = {agent_id: [] for agent_id in timings}
        self._on_the_way: dict[str, list[LateAction]] = {agent_id: [] for agent_id in timings}
        # (LateAction, applied at, result) since the last tick
        self._landed: dict[str, list[tuple[LateAction, float, ActionResult]]] = {agent_id: [] for agent_id in timings}

    def begin_tick(self, agent_id: str, time: float) -> None:
        with self._lock:
            # What landed before the tick that just ended was told then; what landed since is news.
            self._landed[agent_id] = [entry for entry in self._landed[agent_id] if entry[1] >= self._now[agent_id]]
            self._now[agent_id] = time

    # What an agent perceives

    def observe(self, agent_id: str, step: int | None = None) -> Observation:
        """The view its obs_delay allows, with what became of its late actions; reads only, so safe to repeat."""
        with self._lock:
            now, delay = self._now[agent_id], self.timings[agent_id].obs_delay
            history = self._poses[agent_id]
            # With no delay the view is the world now: an action its last decision made just now has landed.
            shown = next(i for i in range(len(history) - 1, -1, -1) if history[i][0] < now - delay or not delay)
            unseen = [action for _, _, action in history[shown + 1 :]]
            unseen += [late.action for late in self._on_the_way[agent_id]]
            notes = self._notes(agent_id)
        observation = self.backend.observe_from(history[shown][1]) if delay else self.backend.observe(agent_id, step)
        if delay:
            notes.insert(0, f"What you see is as it was at {time_text(max(now - delay, 0.0))}.")
        return replace(
            observation,
            caption=" ".join([observation.caption, *notes]),
            time=now,
            observed_time=max(now - delay, 0.0),
            actions_unseen=tuple(unseen),
        )

    def _notes(self, agent_id: str) -> list[str]:
        """What became of the agent's late actions since its last tick, and what is still on its way."""
        notes = [
            f"Your {late.action} (chosen at {time_text(late.chosen_at)}) took effect at {time_text(at)}: "
            f"{result.outcome}{': ' + result.detail if result.detail else ''}."
            for late, at, result in self._landed[agent_id]
        ]
        notes += [
            f"Your {late.action} (chosen at {time_text(late.chosen_at)}) has not taken effect yet: "
            f"it will at {time_text(late.due)}."
            for late in self._on_the_way[agent_id]
        ]
        return notes

    # What an agent does

    def execute_action(self, agent_id: str, action: str, params: Mapping[str, object] | None = None) -> ActionResult:
        with self._lock:
            now, timing = self._now[agent_id], self.timings[agent_id]
            if timing.act_delay or timing.thinks:
                late = LateAction(action, now, now + timing.act_delay)  # retimed by its think time when handed in
                self._queued[agent_id].append(late)
                pose = self._poses[agent_id][-1][1]
                when = "once decided" if timing.thinks else f"at {time_text(late.due)}"
                return ActionResult(action, PENDING, pose, f"takes effect {when}")
        return self._apply(agent_id, action, now)

    def take_queued(self, agent_id: str, decided_at: float | None = None) -> list[LateAction]:
        """The late actions the agent chose this tick, for the schedule to apply when due; chosen at
        `decided_at` where its decision took time (due act_delay after it)."""
        with self._lock:
            queued, self._queued[agent_id] = self._queued[agent_id], []
            if decided_at is not None:
                due = decided_at + self.timings[agent_id].act_delay
                queued = [replace(late, chosen_at=decided_at, due=due) for late in queued]
            self._on_the_way[agent_id].extend(queued)
            return queued

    def apply_late(self, agent_id: str, late: LateAction, time: float) -> ActionResult:
        """Carry out a late action now, at `time`; the agent is told at its next tick."""
        result = self._apply(agent_id, late.action, time)
        with self._lock:
            self._on_the_way[agent_id].remove(late)
            self._landed[agent_id].append((late, time, result))
        return result

    def _apply(self, agent_id: str, action: str, time: float) -> ActionResult:
        result = self.backend.execute_action(agent_id, action)
        with self._lock:
            self._poses[agent_id].append((time, result.pose, action))
        return result

    # The rest is the backend's

    def poll_messages(self, agent_id: str) -> list[Message]:
        return self.backend.poll_messages(agent_id)
