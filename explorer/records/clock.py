"""How a run's records keep time: simulated seconds rounded to a resolution, and the step a time falls in."""

from __future__ import annotations

CLOCK_DECIMALS = 6
CLOCK_RESOLUTION = 10.0**-CLOCK_DECIMALS  # simulated seconds: a timing below it would land every tick at once


def clock(time: float) -> float:
    """Times are sums of settings like 0.1: rounded, equal times compare equal."""
    return round(time, CLOCK_DECIMALS)


def step_at(time: float) -> int | float:
    """The step whose tick is at `time` for an agent ticking once a second (step k at t = k - 1):
    the team's curves count time so, whatever the agents' intervals."""
    step = clock(time + 1)
    return int(step) if step == int(step) else step
