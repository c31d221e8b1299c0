"""Which schedule a run's steps reach the team by: rounds, or the simulated clock; through Redis for a split team."""

from __future__ import annotations

from dataclasses import replace

from explorer.config.run_config import COORDINATOR, RunConfig
from explorer.run.roster import Roster
from explorer.run.world import World
from explorer.schedule.commit import StepCommit
from explorer.schedule.event import EventSchedule
from explorer.schedule.lockstep import LockstepSchedule
from explorer.schedule.timed_perception import TimedPerception
from explorer.team.split import SplitSchedule, SplitTeam
from perception.mock import MockPerception

RunSchedule = LockstepSchedule | EventSchedule | SplitSchedule


def make_schedule(
    config: RunConfig, roster: Roster, steps: int, commit: StepCommit, world: World, team: SplitTeam | None
) -> tuple[RunSchedule, World]:
    """The schedule of --schedule, calling `commit` with each step (wrapped for a split `team`), and the
    world as the agents then perceive it: on the simulated clock under --schedule event."""
    members = list(roster.members)
    schedule: LockstepSchedule | EventSchedule
    if config.schedule == "event":
        timings = roster.timings()
        assert isinstance(world.perception, MockPerception)  # the config lets only --mode mock keep this schedule
        timed = TimedPerception(world.perception, {agent_id: timings[agent_id] for agent_id in roster.agent_ids})
        world = replace(world, perception=timed)
        schedule = EventSchedule(members, timings, steps, commit, commit.deliver, timed)
    else:
        # In lock-step the coordinator ticks every tick_interval rounds.
        every = {COORDINATOR: max(1, round(roster.coordinator.tick_interval))} if roster.coordinator else {}
        schedule = LockstepSchedule(members, steps, commit, every)
    return (team.schedule(schedule) if team else schedule), world
