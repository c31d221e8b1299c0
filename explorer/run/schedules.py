"""Which schedule a run's steps reach the team by (explorer/schedule/catalogue.py), through Redis for a split
team, and when it finishes early."""

from __future__ import annotations

from dataclasses import replace

from explorer.config.episode_options import ALL_FOUND
from explorer.config.run_config import RunConfig
from explorer.run.roster import Roster
from explorer.run.shared_world import SharedWorld
from explorer.schedule.catalogue import RunSchedule, ScheduleSetup
from explorer.schedule.commit import StepCommit
from explorer.schedule.recorded import RecordedClock
from explorer.team.split import SplitSchedule, SplitTeam

Schedule = RunSchedule | SplitSchedule


def make_schedule(
    config: RunConfig, roster: Roster, steps: int, commit: StepCommit, world: SharedWorld, team: SplitTeam | None
) -> tuple[Schedule, SharedWorld]:
    """The schedule of --schedule, calling `commit` with each step (wrapped for a split `team`), and the
    world as the agents then perceive it (on the simulated clock, say). A replay (--replay-replies) keeps
    the recorded clock."""
    recorded = RecordedClock(config.calls.replay_replies) if config.calls.replay_replies else None
    setup = ScheduleSetup(
        list(roster.members),
        list(roster.agent_ids),
        steps,
        commit,
        world.perception,
        world.store,
        roster.timings(),
        recorded,
    )
    made = config.timing.schedule_kind.make(setup)
    _stop_when(config, commit, world, made.schedule)
    world = replace(world, perception=made.perception, store=made.store)
    return (team.schedule(made.schedule) if team else made.schedule), world


def _stop_when(config: RunConfig, commit: StepCommit, world: SharedWorld, schedule: RunSchedule) -> None:
    """Under --stop-when all-found, the schedule finishes once a committed step has found the world's last
    object; under a search task, once it has found the last target."""
    total = world.environment.total_objects
    if config.episode.stop_when == ALL_FOUND and total:
        commit.when_all_found(total, schedule.finish)
    if world.environment.targets:  # a search task ends once every target is found
        commit.when_targets_found(world.environment.targets, schedule.finish)
