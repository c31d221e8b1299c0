"""Means and 95% confidence intervals over a sweep's repetitions (its seeds): plain arithmetic, no scipy."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# Student's t at 97.5% (two-sided 95%) for 1 to 9 degrees of freedom; from 10 on the series below is
# within 1e-5 of it, and few seeds are exactly where a normal approximation would be far too narrow.
T_975_SMALL = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622)
Z_975 = 1.959963984540054


def t_critical(degrees_of_freedom) -> float:
    """The 97.5% quantile of Student's t distribution."""
    if degrees_of_freedom < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {degrees_of_freedom}")
    if degrees_of_freedom <= len(T_975_SMALL):
        return T_975_SMALL[degrees_of_freedom - 1]
    # The Cornish-Fisher expansion of t's quantile around the normal's, in powers of 1/df.
    z, v = Z_975, degrees_of_freedom
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


@dataclass(frozen=True)
class Interval:
    """A sample's mean and its 95% confidence interval; no interval for one value, no mean for none."""

    n: int
    mean: float | None
    low: float | None
    high: float | None


def mean_interval(values) -> Interval:
    """The Student t interval of the values' mean; None values (a metric a run did not reach) are left out."""
    sample = [float(value) for value in values if value is not None]
    if not sample:
        return Interval(0, None, None, None)
    mean = statistics.fmean(sample)
    if len(sample) == 1:
        return Interval(1, mean, None, None)
    half = t_critical(len(sample) - 1) * statistics.stdev(sample) / math.sqrt(len(sample))
    return Interval(len(sample), mean, mean - half, mean + half)


def curve_intervals(curves) -> tuple[list[int], list[Interval]]:
    """Per step, the interval of several runs' curves ([[step, value], ...], steps from 1).

    A run that ended earlier than the others keeps its last value; before its first point a run counts 0.
    """
    curves = [dict(curve) for curve in curves if curve]
    last_step = max((max(curve) for curve in curves), default=0)
    steps = list(range(1, last_step + 1))
    columns: list[list[float]] = [[] for _ in steps]
    for curve in curves:
        value = 0
        for step, column in zip(steps, columns):
            value = curve.get(step, value)
            column.append(value)
    return steps, [mean_interval(column) for column in columns]
