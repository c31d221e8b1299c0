"""The schedule's option: how the team's steps interleave in time (explorer/schedule/catalogue.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.config.options import OneOf, option
from explorer.schedule.catalogue import LOCKSTEP, SCHEDULES, ScheduleKind, schedules_help


@dataclass(frozen=True)
class TimingOptions:
    """The schedule; what it asks of the world and the team is checked where those are (RunConfig.check)."""

    schedule: str = field(
        default=LOCKSTEP,
        metadata=option(
            "--schedule",
            schedules_help(),
            check=OneOf(tuple(SCHEDULES), in_parser=True),
        ),
    )

    @property
    def schedule_kind(self) -> ScheduleKind:
        """--schedule's factory and traits (explorer/schedule/catalogue.py)."""
        return SCHEDULES[self.schedule]
