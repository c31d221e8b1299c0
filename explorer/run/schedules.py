"""Which schedule a run's steps reach the team by: rounds, the simulated clock or the wall clock; through
Redis for a split team."""

from __future__ import annotations

from dataclasses import replace

from explorer.config.run_config import ALL_FOUND, RunConfig
from explorer.run.roster import Roster
from explorer.run.world import World
from explorer.schedule.as_perceived import RealtimePerception, TeamAsPerceived
from explorer.schedule.commit import StepCommit
from explorer.schedule.event import EventSchedule
from explorer.schedule.lockstep import LockstepSchedule
from explorer.schedule.realtime import RealtimeSchedule
from explorer.schedule.recorded import RecordedClock
from explorer.schedule.think import ThinkTimes
from explorer.schedule.timed_perception import TimedPerception
from explorer.schedule.turns import TurnTaking
from explorer.team.split import SplitSchedule, SplitTeam
from perception.mock import MockPerception

RunSchedule = LockstepSchedule | EventSchedule | RealtimeSchedule | SplitSchedule


def make_schedule(
    config: RunConfig, roster: Roster, steps: int, commit: StepCommit, world: World, team: SplitTeam | None
) -> tuple[RunSchedule, World]:
    """The schedule of --schedule, calling `commit` with each step (wrapped for a split `team`), and the
    world as the agents then perceive it: on the simulated clock under --schedule event, and as each step
    perceived the team under --schedule realtime. A replay (--replay-replies) keeps the recorded clock."""
    members = list(roster.members)
    recorded = RecordedClock(config.replay_replies) if config.replay_replies else None
    if config.schedule == "realtime":  # the config keeps it to one process and no coordinator
        realtime = RealtimeSchedule(members, steps, commit, recorded)
        _stop_when(config, commit, world, realtime)
        seen = TeamAsPerceived(world.store)
        return realtime, replace(world, store=seen, perception=RealtimePerception(world.perception, realtime, seen))
    schedule: LockstepSchedule | EventSchedule
    if config.schedule == "event":
        timings = roster.timings()
        assert isinstance(world.perception, MockPerception)  # the config lets only --mode mock keep this schedule
        timed = TimedPerception(world.perception, {agent_id: timings[agent_id] for agent_id in roster.agent_ids})
        world = replace(world, perception=timed)
        schedule = EventSchedule(members, timings, steps, commit, commit.deliver, timed, ThinkTimes(timings, recorded))
    else:
        # In lock-step the coordinators (and the system agent) tick every tick_interval rounds.
        every = {d: max(1, round(roster.members[d].tick_interval)) for d in roster.members if d not in roster.agent_ids}
        schedule = LockstepSchedule(members, steps, commit, every)
    _stop_when(config, commit, world, schedule)
    return (team.schedule(schedule) if team else schedule), world


def _stop_when(config: RunConfig, commit: StepCommit, world: World, schedule: RealtimeSchedule | TurnTaking) -> None:
    """Under --stop-when all-found, the schedule finishes once a committed step has found the world's last
    object; under a search task, once it has found the last target."""
    total = world.environment.total_objects
    if config.stop_when == ALL_FOUND and total:
        commit.when_all_found(total, schedule.finish)
    if world.environment.targets:  # a search task ends once every target is found
        commit.when_targets_found(world.environment.targets, schedule.finish)
