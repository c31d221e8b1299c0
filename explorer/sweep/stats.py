"""Means over a sweep's repetitions (its seeds), and their 95% intervals: a percentile bootstrap over the runs,
clipped to what the figure can be.

A bootstrap makes no assumption of normality, which a handful of seeds cannot support, and its interval stays
within the values seen; the clip keeps it, and a paired difference's, within what is possible (a share between 0
and 1, a count of objects between 0 and the world's). Its resamples are drawn from a fixed seed, so the same runs
give the same intervals on every machine. With few runs it is narrow: three seeds are three values.

A share of runs (how many found every target) has Wilson's interval for a proportion instead, which is wide
where a few runs say little (`proportion_interval`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

RESAMPLES = 4000
RESAMPLE_SEED = 29  # any fixed number: the intervals are a function of the runs alone
LEVEL = 0.95


@dataclass(frozen=True)
class Bounds:
    """What a figure can be: from `low` to `high` (None: no bound that way)."""

    low: float | None = None
    high: float | None = None

    def clip(self, value: float) -> float:
        if self.low is not None:
            value = max(self.low, value)
        if self.high is not None:
            value = min(self.high, value)
        return value

    def of_differences(self) -> Bounds:
        """What a difference of two such figures can be."""
        if self.low is None or self.high is None:
            return Bounds()
        return Bounds(self.low - self.high, self.high - self.low)


@dataclass(frozen=True)
class Interval:
    """A sample's mean and its 95% interval; no interval for one value, no mean for none."""

    n: int
    mean: float | None
    low: float | None
    high: float | None


def mean_interval(values: Iterable[float | None], bounds: Bounds = Bounds()) -> Interval:
    """The bootstrap interval of the values' mean; None values (a figure a run did not reach) are left out."""
    sample = [float(value) for value in values if value is not None]
    if not sample:
        return Interval(0, None, None, None)
    mean = bounds.clip(statistics.fmean(sample))
    if len(sample) == 1:
        return Interval(1, mean, None, None)
    (low,), (high,) = _bootstrap(np.array(sample)[:, None])
    return Interval(len(sample), mean, bounds.clip(low), bounds.clip(high))


def proportion_interval(successes: int, runs: int) -> Interval:
    """The share of `runs` that succeeded, with its 95% Wilson score interval (Wilson, 1927; method 3 of
    Newcombe, Statistics in Medicine 17, 1998):

        (p + z²/2n ± z √(p(1 - p)/n + z²/4n²)) / (1 + z²/n),   p = successes / runs, z = 1.96

    Unlike a bootstrap, which gives [1, 1] for 3 successes in 3 runs, it stays honest at 0 and 1 and with
    few runs (3 of 3: [0.44, 1]); it lies within [0, 1] by construction. No runs: no share.
    """
    if runs == 0:
        return Interval(0, None, None, None)
    share, z = successes / runs, NormalDist().inv_cdf(1 - (1 - LEVEL) / 2)
    centre = share + z * z / (2 * runs)
    spread = z * math.sqrt(share * (1 - share) / runs + z * z / (4 * runs * runs))
    scale = 1 + z * z / runs
    # At 0 or every run the bound is exactly 0 or 1; the formula's rounding would leave 1e-17 there.
    low = 0.0 if successes == 0 else (centre - spread) / scale
    high = 1.0 if successes == runs else (centre + spread) / scale
    return Interval(runs, share, low, high)


def paired_interval(pairs: Sequence[tuple[float | None, float | None]], bounds: Bounds = Bounds()) -> Interval:
    """The mean difference `a - b` over the pairs (a, b) that have both, with its bootstrap interval; `bounds`
    are the figure's own, and the difference is kept within what two such figures can differ by."""
    differences = [a - b for a, b in pairs if a is not None and b is not None]
    return mean_interval(differences, bounds.of_differences())


def curve_intervals(curves: Iterable[list[list[int]]], bounds: Bounds = Bounds()) -> tuple[list[int], list[Interval]]:
    """Per step, the interval of several runs' curves ([[step, value], ...], steps from 1).

    A run that ended earlier than the others keeps its last value; before its first point a run counts 0.
    """
    runs: list[dict[int, int]] = [{point[0]: point[1] for point in curve} for curve in curves if curve]
    last_step = max((max(curve) for curve in runs), default=0)
    steps = list(range(1, last_step + 1))
    if not runs:
        return steps, []
    columns = np.zeros((len(runs), len(steps)))
    for row, curve in zip(columns, runs):
        value = 0
        for index, step in enumerate(steps):
            value = curve.get(step, value)
            row[index] = value
    means = columns.mean(axis=0)
    if len(runs) == 1:
        return steps, [Interval(1, bounds.clip(mean), None, None) for mean in means]
    lows, highs = _bootstrap(columns)
    return steps, [
        Interval(len(runs), bounds.clip(mean), bounds.clip(low), bounds.clip(high))
        for mean, low, high in zip(means, lows, highs)
    ]


def _bootstrap(sample: np.ndarray) -> tuple[list[float], list[float]]:
    """Per column of `sample` (a row per run), the percentile interval of its mean over the same resamples."""
    runs = sample.shape[0]
    generator = np.random.default_rng(RESAMPLE_SEED)
    # How many times each run is drawn in each resample: the resamples' means are one product.
    weights = generator.multinomial(runs, np.full(runs, 1 / runs), size=RESAMPLES) / runs
    means = weights @ sample
    tail = (1 - LEVEL) / 2
    lows, highs = np.quantile(means, [tail, 1 - tail], axis=0)
    return [float(x) for x in lows], [float(x) for x in highs]


def hierarchical_interval(groups: Sequence[Iterable[float | None]], bounds: Bounds = Bounds()) -> Interval:
    """The mean over every value of the groups (a layout's runs, say), with a two-level bootstrap interval:
    each resample draws the groups with replacement, then each drawn group's values with replacement. Runs that
    share a group (a layout) are alike, so a flat bootstrap over runs would be too narrow for another layout;
    this one is as wide as the groups differ. None values are left out, and groups left empty with them."""
    samples = [np.array(kept) for kept in ([float(v) for v in group if v is not None] for group in groups) if kept]
    count = sum(len(sample) for sample in samples)
    if count == 0:
        return Interval(0, None, None, None)
    mean = bounds.clip(float(np.concatenate(samples).mean()))
    if count == 1:
        return Interval(1, mean, None, None)
    generator = np.random.default_rng(RESAMPLE_SEED)
    # How many times each group is drawn per resample; a group drawn c times gives c resamples of its values,
    # which together are c times its size drawn from them with replacement: one multinomial per group.
    drawn = generator.multinomial(len(samples), np.full(len(samples), 1 / len(samples)), size=RESAMPLES)
    totals, sizes = np.zeros(RESAMPLES), np.zeros(RESAMPLES)
    for column, sample in zip(drawn.T, samples):
        picks = generator.multinomial(column * len(sample), np.full(len(sample), 1 / len(sample)))
        totals += picks @ sample
        sizes += column * len(sample)
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(totals / sizes, [tail, 1 - tail])
    return Interval(count, mean, bounds.clip(float(low)), bounds.clip(float(high)))


IQM_RESAMPLES = 2000  # a fixed count: the interval costs the same on every sweep, and is the same every time
QUARTER = 0.25


def iqm(values: Sequence[float]) -> float:
    """The interquartile mean: the mean of the middle half of the values, a quarter of them (rounded down, as
    scipy's `trim_mean` at 0.25, which rliable's `metrics.aggregate_iqm` calls) cut from each end. Unlike the
    mean, one run far off does not move it; unlike the median, it uses half the runs, not one or two."""
    return float(_iqms(np.array([values], dtype=float))[0])


def stratified_iqm_interval(strata: Sequence[Sequence[float | None]], bounds: Bounds = Bounds()) -> Interval:
    """The IQM of every value of every stratum (a world, say) pooled, with its 95% stratified bootstrap
    interval: each resample draws, within each stratum, as many values as it has, so every resample keeps each
    world's share of the runs and never mixes one world's runs into another's; the interval is the percentile
    one over IQM_RESAMPLES resamples from a fixed seed. As rliable reports an aggregate over tasks: Agarwal et
    al., "Deep Reinforcement Learning at the Edge of the Statistical Precipice", NeurIPS 2021
    (`StratifiedBootstrap`, `aggregate_iqm`). None values are left out; no values: no IQM, one: no interval."""
    groups = [np.array([float(v) for v in stratum if v is not None]) for stratum in strata]
    groups = [group for group in groups if group.size]
    if not groups:
        return Interval(0, None, None, None)
    pooled = np.concatenate(groups)
    point = bounds.clip(iqm(pooled.tolist()))
    if pooled.size == 1:
        return Interval(1, point, None, None)
    generator = np.random.default_rng(RESAMPLE_SEED)
    resamples = np.concatenate(
        [group[generator.integers(0, group.size, size=(IQM_RESAMPLES, group.size))] for group in groups], axis=1
    )
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(_iqms(resamples), [tail, 1 - tail])
    return Interval(int(pooled.size), point, bounds.clip(float(low)), bounds.clip(float(high)))


def _iqms(samples: np.ndarray) -> np.ndarray:
    """The IQM of each row of `samples`."""
    size = samples.shape[1]
    cut = int(QUARTER * size)
    return np.sort(samples, axis=1)[:, cut : size - cut].mean(axis=1)
