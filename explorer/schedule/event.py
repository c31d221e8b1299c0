"""Steps on a simulated clock (`--schedule event`): agents tick at their own intervals, and what they see,
do and say takes time.

A min-heap of events: agent ticks, late actions taking effect, messages
reaching mailboxes. Events are ordered by time, then by kind (at one time,
agents tick first, then the actions due take effect, then the messages due
arrive, so a message delivered at t is read at its recipient's first tick
after t), then by agent order, then by the order they were made; so the same
seed and arguments give the same trace.

Agents that tick at the same time run their steps concurrently (their model
calls overlap), reading the team's state and changing nothing of it; when the
last of them hands in, the ticks are committed at once in agent order, as
lock-step rounds are, and the clock runs on to the next ticks, applying the
events on the way. The run ends at `end_time`: a tick due then or later never
happens, nor does a message or action due then.

A member with a think time (explorer/schedule/think.py) decides for that
long after its tick: its action is chosen then (and lands act_delay later),
its message leaves then, and its next tick is the first of its ticks (every
tick_interval from 0) at or after that time; an action landing as its
decision ends takes effect before the ticks at that time, so that tick sees it.

With every timing at its default (tick_interval 1, no delays, no think time)
the ticks are lock-step's rounds: tick k of every agent at t = k - 1, messages
read one tick after they are sent, actions at once.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from explorer.records.clock import clock
from explorer.schedule.think import ThinkTimes
from explorer.schedule.timed_perception import LateAction, TimedPerception, Timing
from explorer.schedule.turns import Commit, TurnTaking
from nodes.decision_context import SightReport
from nodes.interfaces import StepReport
from perception.base import Message

# The order of events at the same time: an action landing as its decision ends (think time, no
# act_delay), the ticks, the actions due, the messages due.
DECIDED, TICK, ACTION, DELIVERY = 0, 1, 2, 3
Sent = Message | SightReport  # what a tick sends: messages to the team, a report up to the coordinator
# (time, kind, agent order, made, agent_id, payload): a tick (no payload), a late action, a delivery
Event = tuple[float, int, int, int, str, LateAction | Sent | None]


# Ticks per member per simulated second, on average over the team: ten times lock-step's (--steps is the
# run's end in simulated seconds). More is a slip of units, and a run that would not end.
MAX_TICK_RATE = 10


def tick_rate_problem(timings: Mapping[str, Timing]) -> str | None:
    """Why a team with these timings would tick too often for a run on the clock, or None.

    Each member ticks once at 0, then every tick_interval until --steps (the run's end): at most
    steps / tick_interval + 1 times. So a team within MAX_TICK_RATE makes at most
    MAX_TICK_RATE x steps x members ticks (and one more each) in all, whatever its delays, which
    only move actions and messages between the ticks.
    """
    rate = sum(1 / timing.tick_interval for timing in timings.values())
    if rate <= MAX_TICK_RATE * len(timings) * (1 + 1e-9):  # the slack: 1 / 0.1 summed need not be exact
        return None
    fastest = min(timings, key=lambda member: timings[member].tick_interval)
    return (
        f"the tick intervals make the team tick {rate:,.1f} times per simulated second ({fastest} every "
        f"{timings[fastest].tick_interval:g}), more than {MAX_TICK_RATE} per member: a run may make at most "
        f"{MAX_TICK_RATE} x --steps ticks per member"
    )


class EventSchedule(TurnTaking):
    """The `Schedule` (nodes/interfaces.py) of a simulated clock."""

    def __init__(
        self,
        agent_ids: Sequence[str],
        timings: Mapping[str, Timing],
        end_time: float,
        commit: Commit,
        deliver: Callable[[Sent], None],
        world: TimedPerception,
        think: ThinkTimes | None = None,
    ) -> None:
        """`commit(reports, time, complete)` applies ticks as lock-step's commit applies a round
        (their messages and reports up aside); `deliver(sent)` puts a message in its mailbox, or
        a report in its coordinator's inbox; `world` is the TimedPerception that queues and
        applies late actions; `think` says how long each decision took (none where not given)."""
        super().__init__()
        self._order = {agent_id: i for i, agent_id in enumerate(agent_ids)}
        self.timings = timings
        self.end_time = end_time
        self._commit, self._deliver, self._world = commit, deliver, world
        self._think = think or ThinkTimes(timings)
        self._events: list[Event] = []
        self._made = itertools.count()
        self._slots = dict.fromkeys(agent_ids, 0)  # each agent's tick under way, as k of its ticks at k x tick_interval
        self._ticking: set[str] = set(agent_ids)  # every agent ticks at 0
        self._done: set[str] = set()
        self.now = 0.0
        self.never_delivered = []
        for agent_id in agent_ids:
            self._begin_tick(agent_id)

    def _turn(self) -> set[str]:
        return self._ticking

    def _goes_on(self, agent_id: str) -> bool:
        return agent_id not in self._done

    def _end_turn(self) -> None:
        self._commit_pending()
        self._run_to_next_ticks()

    def _commit_pending(self, complete: bool = True) -> None:
        reports = self._pending_in_order(self._order)
        now = self.now
        for report in reports:
            agent_id, timing = report.agent_id, self.timings[report.agent_id]
            decided = self._decided(report, now)
            if report.record is not None and report.record.time is None:
                report.record.time = now  # a coordinator's: it does not look, so no view says when
            sent_up: list[Sent] = [report.upward] if report.upward else []
            for sent in [*report.outgoing, *sent_up]:
                self._push(decided + timing.msg_delay, DELIVERY, agent_id, replace(sent, sent_at=decided))
            if agent_id in self._world.timings:
                for late in self._world.take_queued(agent_id, decided if decided != now else None):
                    self._push(late.due, DECIDED if late.due == late.chosen_at else ACTION, agent_id, late)
            slot = self._slots[agent_id] + 1
            if decided != now:  # its first tick at or after its decision
                slot = max(slot, math.ceil(clock(decided / timing.tick_interval)))
            self._slots[agent_id] = slot
            following = clock(slot * timing.tick_interval)
            if following < self.end_time:
                self._push(following, TICK, agent_id, None)
            else:
                self._done.add(agent_id)
        self._commit([replace(report, outgoing=[], upward=None) for report in reports], now, complete)

    def _decided(self, report: StepReport, now: float) -> float:
        """When the step's decision was made: its tick's time, later by its think time (on its record)."""
        think = self._think.of(report)
        if think is None:
            return now
        think = clock(think)
        if report.record is not None:
            report.record.think_time = think
        return clock(now + think)

    def _run_to_next_ticks(self) -> None:
        """Apply the events up to the next ticks, and start them; at the run's end, finish every agent."""
        while self._events and self._events[0][0] < self.end_time:
            time, kind, _, _, agent_id, payload = heapq.heappop(self._events)
            if kind == TICK:
                self.now, self._ticking = time, {agent_id}
                while self._events and self._events[0][:2] == (time, TICK):
                    self._ticking.add(heapq.heappop(self._events)[4])
                for ticking in self._ticking:
                    self._begin_tick(ticking)
                return
            if isinstance(payload, LateAction):  # kind DECIDED or ACTION
                self._world.apply_late(agent_id, payload, time)
            elif payload is not None:  # kind DELIVERY
                self._deliver(replace(payload, delivered_at=time))
        self._ticking = set()
        self._done = set(self._order)
        self.never_delivered = [e[5] for e in sorted(self._events) if e[1] == DELIVERY and isinstance(e[5], Message)]

    def _begin_tick(self, agent_id: str) -> None:
        if agent_id in self._world.timings:
            self._world.begin_tick(agent_id, self.now)

    def _push(self, time: float, kind: int, agent_id: str, payload: LateAction | Sent | None) -> None:
        heapq.heappush(self._events, (clock(time), kind, self._order[agent_id], next(self._made), agent_id, payload))
