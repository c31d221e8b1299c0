"""Means over a sweep's repetitions (its seeds), and their 95% intervals: a percentile bootstrap over the runs,
clipped to what the figure can be.

A bootstrap makes no assumption of normality, which a handful of seeds cannot support, and its interval stays
within the values seen; the clip keeps it, and a paired difference's, within what is possible (a share between 0
and 1, a count of objects between 0 and the world's). Its resamples are drawn from a fixed seed, so the same runs
give the same intervals on every machine. With few runs it is narrow: three seeds are three values.

A share of runs (how many found every target) has Wilson's interval for a proportion instead, which is wide
where a few runs say little (`proportion_interval`), and the difference of two such shares over the same pairs
of runs Newcombe's interval for paired proportions (`paired_proportion_interval`). `probability_of_improvement`
is rliable's: how likely a run of one condition does better than a run of another.
"""

from __future__ import annotations

import functools
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
    """A sample's mean and its 95% interval; no interval for one value, no mean for none. A time some runs
    never reached (explorer/sweep/survival.py) gives its Kaplan–Meier median as `mean` instead, and says how many
    of its n runs were `censored`; where the median or the interval's high end was not reached (None), `beyond`
    is the longest time observed, which it lies beyond."""

    n: int
    mean: float | None
    low: float | None
    high: float | None
    censored: int | None = None  # None: not a time some runs never reached
    beyond: float | None = None


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
    return Interval(runs, successes / runs, *_wilson(successes, runs))


def _wilson(successes: int, runs: int) -> tuple[float, float]:
    """The Wilson score interval's bounds, of at least one run."""
    share, z = successes / runs, NormalDist().inv_cdf(1 - (1 - LEVEL) / 2)
    centre = share + z * z / (2 * runs)
    spread = z * math.sqrt(share * (1 - share) / runs + z * z / (4 * runs * runs))
    scale = 1 + z * z / runs
    # At 0 or every run the bound is exactly 0 or 1; the formula's rounding would leave 1e-17 there.
    low = 0.0 if successes == 0 else (centre - spread) / scale
    high = 1.0 if successes == runs else (centre + spread) / scale
    return low, high


def paired_proportion_interval(pairs: Sequence[tuple[bool, bool]]) -> Interval:
    """The difference between two shares over the same pairs of runs (a condition's success and its
    baseline's, seed by seed), with Newcombe's hybrid score interval for paired proportions: method 10 of
    Newcombe, "Improved confidence intervals for the difference between binomial proportions based on paired
    data", Statistics in Medicine 17 (1998), 2635-2650. From the n pairs' 2x2 table (a: both yes, b: only the
    first, c: only the second, d: neither), the difference θ = (b - c)/n and each share's Wilson interval
    (l1, u1 of p1 = (a + b)/n; l2, u2 of p2 = (a + c)/n):

        low  = θ - √((p1 - l1)² - 2φ(p1 - l1)(u2 - p2) + (u2 - p2)²)
        high = θ + √((u1 - p1)² - 2φ(u1 - p1)(p2 - l2) + (p2 - l2)²)

    with φ the pairs' correlation (ad - bc)/√((a + b)(c + d)(a + c)(b + d)), its numerator brought n/2 nearer
    0 where positive (φ = 0 where a margin is 0). Where every pair agrees a bootstrap over the pairs gives
    [0, 0]; this stays honest with few pairs (54 pairs that all agree: [-0.0729, +0.0729]), within [-1, 1].
    No pairs: no difference."""
    n = len(pairs)
    if n == 0:
        return Interval(0, None, None, None)
    a = sum(first and second for first, second in pairs)
    b = sum(first and not second for first, second in pairs)
    c = sum(second and not first for first, second in pairs)
    d = n - a - b - c
    (p1, (l1, u1)), (p2, (l2, u2)) = ((yes / n, _wilson(yes, n)) for yes in (a + b, a + c))
    phi = _pair_correlation(a, b, c, d)
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    difference = (b - c) / n
    return Interval(n, difference, max(-1.0, difference - below), min(1.0, difference + above))


def _pair_correlation(a: int, b: int, c: int, d: int) -> float:
    """Newcombe's φ for method 10: the 2x2 table's correlation, a positive numerator less n/2 (not below 0)."""
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    numerator = float(a * d - b * c)
    if numerator > 0:
        numerator = max(numerator - (a + b + c + d) / 2, 0.0)
    return numerator / math.sqrt(margins)


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
    # How many times each run is drawn in each resample: the resamples' means are one product.
    means = _flat_draws(sample.shape[0]) @ sample
    tail = (1 - LEVEL) / 2
    lows, highs = np.quantile(means, [tail, 1 - tail], axis=0)
    return [float(x) for x in lows], [float(x) for x in highs]


# The resamples depend only on the fixed seed and how many runs there are (in each group, or on each side), not
# on their values: each kind is drawn once and kept for every figure over as many runs. Read-only arrays.
DRAWS_KEPT = 64


@functools.lru_cache(maxsize=DRAWS_KEPT)
def _flat_draws(runs: int) -> np.ndarray:
    """Per resample (a row), the weight of each of `runs` runs in its mean: how many times it is drawn / runs."""
    generator = np.random.default_rng(RESAMPLE_SEED)
    weights = generator.multinomial(runs, np.full(runs, 1 / runs), size=RESAMPLES) / runs
    weights.flags.writeable = False
    return weights


@functools.lru_cache(maxsize=DRAWS_KEPT)
def _two_level_draws(lengths: tuple[int, ...]) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The two-level resamples of groups of these `lengths`: how many times each group is drawn per resample
    (a row), and per group how many times each of its values is. A group drawn c times gives c resamples of
    its values, which together are c times its size drawn from them with replacement: one multinomial."""
    generator = np.random.default_rng(RESAMPLE_SEED)
    drawn = generator.multinomial(len(lengths), np.full(len(lengths), 1 / len(lengths)), size=RESAMPLES)
    picks = tuple(
        generator.multinomial(column * length, np.full(length, 1 / length)) for column, length in zip(drawn.T, lengths)
    )
    for array in (drawn, *picks):
        array.flags.writeable = False
    return drawn, picks


@functools.lru_cache(maxsize=DRAWS_KEPT)
def _paired_side_draws(shapes: tuple[tuple[int, int], ...]) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per task of these (X's runs, Y's runs) `shapes`, the stratified independent resamples' counts of each
    side's runs (a row per resample), for the probability of improvement."""
    generator = np.random.default_rng(RESAMPLE_SEED)
    drawn = []
    for mine, theirs in shapes:
        counts = _draw_counts(generator, mine, IQM_RESAMPLES), _draw_counts(generator, theirs, IQM_RESAMPLES)
        for side in counts:
            side.flags.writeable = False
        drawn.append(counts)
    return tuple(drawn)


def _draw_counts(generator: np.random.Generator, size: int, resamples: int) -> np.ndarray:
    """Per resample (a row), how many times each of `size` items is drawn in `size` draws with replacement: a
    multinomial count, made from uniform draws, which numpy makes many times faster than its multinomials."""
    drawn = generator.integers(0, size, (resamples, size)) + np.arange(resamples)[:, None] * size
    return np.bincount(drawn.ravel(), minlength=resamples * size).reshape(resamples, size)


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
    lengths = tuple(len(sample) for sample in samples)
    drawn, picks = _two_level_draws(lengths)
    totals = sum((counts @ sample for counts, sample in zip(picks, samples)), np.zeros(RESAMPLES))
    sizes = drawn @ np.array(lengths)
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


def probability_of_improvement(tasks: Sequence[tuple[Sequence[float], Sequence[float]]]) -> Interval:
    """How likely a run of X does better than a run of Y, as rliable defines it (Agarwal et al., NeurIPS 2021,
    `metrics.probability_of_improvement`): per task (a layout, say), P(x > y) + P(x = y)/2 over every pair of
    an X run and a Y run on it (the Mann–Whitney U statistic over n_x n_y), then the mean over the tasks.
    `tasks` gives each task's (X's values, Y's values), higher better: negate a figure where lower is. 0.5:
    neither does better; 1: every X run beats every Y run. Its 95% interval is rliable's stratified
    independent bootstrap: each of IQM_RESAMPLES resamples draws, within each task, X's runs and Y's runs with
    replacement, apart. A task without runs of both is left out; none left: no figure. `n` counts X's runs."""
    kept = [(np.asarray(x, dtype=float), np.asarray(y, dtype=float)) for x, y in tasks if len(x) and len(y)]
    if not kept:
        return Interval(0, None, None, None)
    # Per task, each pair's score: 1 where X's run did better, 0.5 where they tie, 0 where Y's did.
    scores = [np.sign(x[:, None] - y[None, :]) / 2 + 0.5 for x, y in kept]
    point = float(np.mean([score.mean() for score in scores]))
    runs = sum(len(x) for x, _ in kept)
    if all(score.size == 1 for score in scores):
        return Interval(runs, point, None, None)
    total = np.zeros(IQM_RESAMPLES)
    for score, (mine, theirs) in zip(scores, _paired_side_draws(tuple(score.shape for score in scores))):
        # How many times each X run and each Y run is drawn per resample: its mean score is one product.
        total += ((mine @ score) * theirs).sum(axis=1) / score.size
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(total / len(scores), [tail, 1 - tail])
    return Interval(runs, point, float(low), float(high))
