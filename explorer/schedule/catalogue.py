"""The schedules, by the name `--schedule` gives them: each one's factory and its traits.

Adding a schedule is two files: its module in explorer/schedule/, and its entry here. Nothing outside this
catalogue tests a schedule's name; the rest of the code asks its traits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from explorer.schedule.as_perceived import RealtimePerception, TeamAsPerceived
from explorer.schedule.commit import StepCommit
from explorer.schedule.event import EventSchedule
from explorer.schedule.lockstep import LockstepSchedule
from explorer.schedule.realtime import RealtimeSchedule
from explorer.schedule.recorded import RecordedClock
from explorer.schedule.think import ThinkTimes
from explorer.schedule.timed_perception import TimedPerception, Timing
from explorer.team.store import TeamStore
from perception.base import PerceptionInterface
from perception.mock import MockPerception

RunSchedule = LockstepSchedule | EventSchedule | RealtimeSchedule
LOCKSTEP = "lockstep"  # the default


@dataclass(frozen=True)
class ScheduleSetup:
    """What a schedule is made from: the team in order (explorers first, then any directors), its step budget,
    the commit each step goes through, what the agents perceive and share, each member's timing and tick
    interval from its profile, and a replayed run's clock (--replay-replies)."""

    members: list[str]
    agent_ids: list[str]
    steps: int
    commit: StepCommit
    perception: PerceptionInterface
    store: TeamStore
    timings: Mapping[str, Timing]
    recorded: RecordedClock | None


@dataclass(frozen=True)
class Scheduled:
    """A schedule made, with the perception and the store the agents then use (a schedule may wrap them)."""

    schedule: RunSchedule
    perception: PerceptionInterface
    store: TeamStore


@dataclass(frozen=True)
class ScheduleKind:
    make: Callable[[ScheduleSetup], Scheduled]
    help: str  # what --help says of it
    clock: str | None  # the unit of the report's time axis where the schedule keeps a clock
    timed_profiles: bool  # profiles' timings (tick_interval, delays, think time) apply
    mock_only: bool  # a game keeps its own time
    one_process: bool  # no coordinator, and no team split across processes
    wall_clock: bool  # steps committed as they finish: reproduced by --replay-replies, not by the seed
    rounds: bool  # every explorer takes every step: a stopped run's last round may be partial


def _lockstep(setup: ScheduleSetup) -> Scheduled:
    # The coordinators (and the system agent) tick every tick_interval rounds.
    directors = [member for member in setup.members if member not in setup.agent_ids]
    every = {d: max(1, round(setup.timings[d].tick_interval)) for d in directors}
    return Scheduled(LockstepSchedule(setup.members, setup.steps, setup.commit, every), setup.perception, setup.store)


def _event(setup: ScheduleSetup) -> Scheduled:
    assert isinstance(setup.perception, MockPerception)  # the kind is mock_only
    timings, commit = setup.timings, setup.commit
    timed = TimedPerception(setup.perception, {agent_id: timings[agent_id] for agent_id in setup.agent_ids})
    think = ThinkTimes(timings, setup.recorded)
    schedule = EventSchedule(setup.members, timings, setup.steps, commit, commit.deliver, timed, think)
    return Scheduled(schedule, timed, setup.store)


def _realtime(setup: ScheduleSetup) -> Scheduled:
    realtime = RealtimeSchedule(setup.members, setup.steps, setup.commit, setup.recorded)
    seen = TeamAsPerceived(setup.store)
    return Scheduled(realtime, RealtimePerception(setup.perception, realtime, seen), seen)


SCHEDULES: dict[str, ScheduleKind] = {
    LOCKSTEP: ScheduleKind(
        _lockstep,
        help="every agent takes step k before any takes k + 1",
        clock=None,
        timed_profiles=False,
        mock_only=False,
        one_process=False,
        wall_clock=False,
        rounds=True,
    ),
    "event": ScheduleKind(
        _event,
        help="a simulated clock with each agent's tick_interval, obs_delay, act_delay, msg_delay and think_time "
        "from --profiles",
        clock="simulated seconds",
        timed_profiles=True,
        mock_only=True,
        one_process=False,
        wall_clock=False,
        rounds=False,
    ),
    "realtime": ScheduleKind(
        _realtime,
        help="no waiting for teammates, each step committed as it finishes, on the wall clock (reproducible by "
        "--replay-replies, not by running again)",
        clock="seconds (wall clock)",
        timed_profiles=False,
        mock_only=True,
        one_process=True,
        wall_clock=True,
        rounds=False,
    ),
}


def schedules_help() -> str:
    """--schedule's help, from each schedule's."""
    told = [f"{name}{' (default)' if name == LOCKSTEP else ''}: {kind.help}" for name, kind in SCHEDULES.items()]
    mock_only = [name for name, kind in SCHEDULES.items() if kind.mock_only]
    return "; ".join(told) + f"; {' and '.join(mock_only)} in mock mode"
