"""The time runs took to get somewhere (every target found, 90% of the objects seen) when some never got there:
the Kaplan–Meier median with its 95% interval, from SciPy. This module alone on the sweep's floor imports it.

A run that ended without getting there is censored at its last step: its time is longer than that, not
missing. A mean over the runs that got there leaves the failures out, so a condition that fails more often can
look faster. The Kaplan–Meier estimate of S(t), the share of runs not there yet by t, takes each run for what it
says (Kaplan and Meier, 1958): `scipy.stats.ecdf` on `scipy.stats.CensoredData`.

The median is the first time S drops to 0.5 or below. Its 95% interval runs from the first time the lower curve
of S's pointwise 95% band (log-log) drops to 0.5 or below to the first time its upper curve does. R's `survfit`
and lifelines' `median_survival_times` build the interval the same way, after Brookmeyer and Crowley (1982).
Where a curve never drops that far (half the runs or more never got there), that figure is not reached: None,
and the interval's `beyond` is the longest time observed. The estimate treats the runs as independent.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from explorer.sweep.stats import LEVEL, Interval

MEDIAN = 0.5
# S is a product of fractions: where it is 0.5 it can be computed a rounding error above it.
ROUNDING = 1e-9


def median_time(times: Sequence[float], reached: Sequence[bool]) -> Interval:
    """The Kaplan–Meier median of the runs' `times`, each run's time observed where `reached`, else the time
    it was censored at, with its 95% interval (none for one run) and how many runs were censored."""
    censored = sum(not got for got in reached)
    if not times:
        return Interval(0, None, None, None, censored=0)
    from scipy import stats  # here, not above: every run's start imports the sweep's metrics, and this is 1 s

    longest = float(max(times))
    data = stats.CensoredData(
        uncensored=[time for time, got in zip(times, reached) if got],
        right=[time for time, got in zip(times, reached) if not got],
    )
    survival = stats.ecdf(data).sf
    median = _first_at_or_below(survival.quantiles, survival.probabilities)
    if len(times) == 1:
        return Interval(1, median, None, None, censored, None if median is not None else longest)
    lower, upper = _band(survival)
    low, high = _first_at_or_below(survival.quantiles, lower), _first_at_or_below(survival.quantiles, upper)
    return Interval(len(times), median, low, high, censored, None if high is not None else longest)


def _band(survival: Any) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper curves of S's pointwise 95% log-log band at its times. Where S is 0 or 1 the
    log-log formula is undefined (SciPy warns, and gives NaN): there the band closes on S itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        band = survival.confidence_interval(confidence_level=LEVEL, method="log-log")
    estimate = survival.probabilities
    lower, upper = band.low.probabilities, band.high.probabilities
    return np.where(np.isnan(lower), estimate, lower), np.where(np.isnan(upper), estimate, upper)


def _first_at_or_below(times: np.ndarray, curve: np.ndarray) -> float | None:
    """The first time the curve is at 0.5 or below; None where it never is."""
    at = np.flatnonzero(curve <= MEDIAN + ROUNDING)
    return float(times[at[0]]) if at.size else None
