"""Which schedule a run's steps reach the team by: rounds, the simulated clock or the wall clock; through
Redis for a split team."""

from __future__ import annotations

from dataclasses import replace

from explorer.config.run_config import COORDINATOR, RunConfig
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
        # In lock-step the coordinator ticks every tick_interval rounds.
        every = {COORDINATOR: max(1, round(roster.coordinator.tick_interval))} if roster.coordinator else {}
        schedule = LockstepSchedule(members, steps, commit, every)
    return (team.schedule(schedule) if team else schedule), world
