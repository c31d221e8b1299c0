"""A sweep's conditions compared: per condition each metric's mean over its finished runs with its interval and
how many runs it counts, its paired differences against its baseline condition, replicate by replicate, and
the probability that it does better than the baseline.

A condition's runs are its replicates: its seeds, or with `replicates: [seed, world-seed]` its seeds on each
layout. Over one replicate key the interval is a bootstrap over the runs; over two or more, a two-level one
(stats.hierarchical_interval) over the last key's values (the layouts), then the runs within each. A share of
runs (success) has Wilson's interval, and its paired difference Newcombe's for paired proportions.

A time some runs never reach (the steps to every target, to 90% of the objects) is a Kaplan–Meier median over
every run, a run that never got there censored at its last step (explorer/sweep/survival.py). In its paired
differences, its probability of improvement and its IQM, such a run counts at its last step: a lower bound on
its time, so a failure is never left out.

The console, conditions.csv and sweep.html all show these figures, written by `figure_text`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.records.summary import FINISHED
from explorer.sweep.stats import (
    Bounds,
    Interval,
    hierarchical_interval,
    mean_interval,
    paired_interval,
    paired_proportion_interval,
    probability_of_improvement,
    proportion_interval,
)
from explorer.sweep.survival import median_time

# What limits a metric: the share of something, the world's objects or cells, the run's steps; else 0 or more.
SHARE, OBJECTS, CELLS, STEPS = "share", "objects", "cells", "steps"
HIGHER, LOWER = "higher", "lower"  # which way a metric is better
# What a metric's figure is, as conditions.csv's `statistic` names it.
MEAN, PROPORTION, MEDIAN = "mean", "share", "km_median"


@dataclass(frozen=True)
class Metric:
    name: str  # as conditions.csv and a sweep file's `metric:` name it; its column in results.csv unless `column`
    label: str  # as the page and the console name it
    bound: str | None = None  # SHARE, OBJECTS, CELLS or STEPS; None: 0 or more
    proportion: bool = False  # a share of runs, each run yes or no: Wilson's interval, not the bootstrap's
    column: str | None = None  # its column in results.csv where that is not its name (success: all_found)
    aliases: tuple[str, ...] = ()  # other names a sweep file's `metric:` may give it
    # A time some runs never reach: the run figure such a run is censored at (steps_run, its last step); its
    # figure is then the Kaplan–Meier median over every run. None: a run without the figure is left out.
    censored_at: str | None = None
    better: str | None = None  # HIGHER or LOWER: an improvement, for its probability; None: neither way

    @property
    def statistic(self) -> str:
        """What its figure is: a mean, a share of runs, or a Kaplan–Meier median."""
        return PROPORTION if self.proportion else MEDIAN if self.censored_at else MEAN

    def value(self, row: RunRow) -> Any:
        """The run's figure; None where it has none."""
        return row.metrics.get(self.column or self.name)

    def counted(self, row: RunRow) -> Any:
        """The run's figure as paired differences, the probability of improvement and the IQM count it: where
        the run could get there and did not, the figure it is censored at (its last step: a lower bound)."""
        value = self.value(row)
        if value is None and self.censored_at and (self.column or self.name) in row.metrics:
            return row.metrics.get(self.censored_at)
        return value


@dataclass(frozen=True)
class RunRow:
    """One run of the sweep as it ended (or not)."""

    name: str  # its directory in the sweep's
    condition: str  # its condition's label
    world: str  # its world, as the page groups conditions by it
    factors: dict[str, str]  # what makes its condition: its name, the grid's values but the replicates'
    replicate: tuple[Any, ...]  # its replicate keys' values, the outermost last: what pairs it with other runs
    status: str  # completed, budget_exhausted, interrupted, failed, refused (sweep/launch.py), misshapen or not run
    metrics: dict[str, Any]  # from its summary.json (sweep/results.py); {} where it has none
    curve: list[list[int]]  # [[step, objects found], ...]
    targets: tuple[str, ...] = ()  # its search task's targets; () where it has none

    @property
    def finished(self) -> bool:
        """Ran to its end (completed, or stopped by a budget): its figures count."""
        return self.status in FINISHED


@dataclass(frozen=True)
class ConditionFigures:
    """One condition's figures over its finished runs, and against its baseline where it has one."""

    label: str
    world: str
    runs: list[RunRow]  # all of them, in the sweep's order
    finished: list[RunRow]
    figures: dict[str, Interval]  # metric name -> its mean and interval over the finished runs
    baseline: str | None = None  # the baseline condition's label; None for the baseline itself, or none
    pairs: int = 0  # the replicates it shares with its baseline, finished in both
    differences: dict[str, Interval] | None = None  # metric name -> its mean paired difference from the baseline
    # metric name -> the probability that a run of it does better than a run of the baseline (a metric with
    # a direction: `Metric.better`)
    improvement: dict[str, Interval] | None = None


def compare(rows: list[RunRow], metrics: tuple[Metric, ...], baseline: dict[str, str] | None) -> list[ConditionFigures]:
    """Each condition's figures, in the order the rows first give it; paired with its baseline where one is named."""
    labels = list(dict.fromkeys(row.condition for row in rows))
    compared = []
    for label in labels:
        runs = [row for row in rows if row.condition == label]
        finished = [row for row in runs if row.finished]
        figures = {m.name: _figure(m, finished) for m in metrics}
        compared.append(ConditionFigures(label, runs[0].world, runs, finished, figures))
    if baseline is None:
        return compared
    return [_paired(condition, compared, metrics, baseline) for condition in compared]


def _figure(metric: Metric, runs: list[RunRow]) -> Interval:
    """The metric's mean over the runs that have it, with its interval: Wilson's for a share of runs, and the
    Kaplan–Meier median over every run for a time some runs never reach."""
    if metric.proportion:
        outcomes = [bool(value) for value in map(metric.value, runs) if value is not None]
        return proportion_interval(sum(outcomes), len(outcomes))
    if metric.censored_at:
        timed = [(time, metric.value(row) is not None) for row in runs if (time := metric.counted(row)) is not None]
        return median_time([time for time, _ in timed], [reached for _, reached in timed])
    values, limits = [metric.value(row) for row in runs], bounds(metric.bound, runs)
    if _flat(runs):
        return mean_interval(values, limits)
    return hierarchical_interval(_by_outer(values, runs), limits)


def _flat(runs: list[RunRow]) -> bool:
    """True where the runs repeat over one key (the seed): a bootstrap over the runs themselves."""
    return all(len(row.replicate) < 2 for row in runs)


def _by_outer(values: list[Any], runs: list[RunRow]) -> list[list[Any]]:
    """The runs' values grouped by their outermost replicate key's value (a layout's runs together)."""
    groups: dict[Any, list[Any]] = {}
    for value, row in zip(values, runs):
        groups.setdefault(row.replicate[-1], []).append(value)
    return list(groups.values())


def done_by_step(runs: list[RunRow], done: Metric) -> tuple[list[int], list[Interval]]:
    """Per step k, the share of the runs (those with a search task) that were done by k, `done` giving the step
    each was done at (None: never), with its Wilson interval; steps up to the longest of those runs."""
    searching = [row for row in runs if row.targets]
    last = max((row.metrics.get("steps_run") or done.value(row) or 0 for row in searching), default=0)
    steps = list(range(1, last + 1))
    finished_at = [done.value(row) for row in searching]
    return steps, [
        proportion_interval(sum(at is not None and at <= step for at in finished_at), len(searching)) for step in steps
    ]


def _paired(
    condition: ConditionFigures, compared: list[ConditionFigures], metrics: tuple[Metric, ...], baseline: dict[str, str]
) -> ConditionFigures:
    """The condition with its differences from the condition that has the baseline's values and the same others."""
    factors = condition.runs[0].factors
    wanted = {**factors, **baseline}
    base = next((c for c in compared if c.runs[0].factors == wanted), None)
    if base is None or base is condition:
        return condition
    theirs = {row.replicate: row for row in base.finished}
    pairs = [(row, theirs[row.replicate]) for row in condition.finished if row.replicate in theirs]
    improvement = {m.name: _improvement(m, condition.finished, base.finished) for m in metrics if m.better is not None}
    return ConditionFigures(
        condition.label,
        condition.world,
        condition.runs,
        condition.finished,
        condition.figures,
        base.label,
        len(pairs),
        {metric.name: _difference(metric, pairs) for metric in metrics},
        improvement,
    )


def _difference(metric: Metric, pairs: list[tuple[RunRow, RunRow]]) -> Interval:
    """The mean paired difference of the metric over the (mine, its) pairs, with its interval as _figure's; a
    share of runs with Newcombe's interval for paired proportions. A run that never got where a censored metric
    counts is counted at its last step."""
    values = [(metric.counted(a), metric.counted(b)) for a, b in pairs]
    if metric.proportion:
        return paired_proportion_interval([(bool(a), bool(b)) for a, b in values if a is not None and b is not None])
    mine, limits = [a for a, _ in pairs], bounds(metric.bound, [row for pair in pairs for row in pair])
    if _flat(mine):
        return paired_interval(values, limits)
    differences = [None if None in pair else pair[0] - pair[1] for pair in values]
    return hierarchical_interval(_by_outer(differences, mine), limits.of_differences())


def _improvement(metric: Metric, mine: list[RunRow], theirs: list[RunRow]) -> Interval:
    """The probability that a run of mine does better on the metric than a run of theirs, per task (a layout,
    where the runs repeat over layouts; else one task) and averaged over the tasks."""
    sign = 1.0 if metric.better == HIGHER else -1.0
    tasks: dict[Any, tuple[list[float], list[float]]] = {}
    for side, rows in enumerate((mine, theirs)):
        for row in rows:
            value = metric.counted(row)
            if value is not None:
                task = row.replicate[-1] if len(row.replicate) > 1 else None
                tasks.setdefault(task, ([], []))[side].append(sign * float(value))
    return probability_of_improvement(list(tasks.values()))


def bounds(bound: str | None, runs: list[RunRow]) -> Bounds:
    """What a metric with this `bound` can be over these runs: a share from 0 to 1, a count up to the world's,
    steps from 1 up to the run's; else 0 or more."""
    if bound == SHARE:
        return Bounds(0.0, 1.0)
    limit = {OBJECTS: "total_objects", CELLS: "total_cells", STEPS: "steps_run"}.get(bound or "")
    if limit is None:
        return Bounds(0.0, None)
    highest = [row.metrics[limit] for row in runs if row.metrics.get(limit) is not None]
    return Bounds(1.0 if bound == STEPS else 0.0, max(highest) if highest else None)


def runs_text(count: int) -> str:
    """`count` runs in words: `1 run`, `2 runs`."""
    return f"{count:,} run" if count == 1 else f"{count:,} runs"


def figure_text(interval: Interval, runs: int, signed: bool = False) -> str:
    """`mean [low, high]`, and `(n=k/runs)` where it counts fewer than the `runs` it could: "33 (n=2/3)". A
    Kaplan–Meier median says how many of its runs were censored, and `> 60` for a figure not reached by step 60
    (the longest time observed): "44 [38, > 60] (3 censored)"."""
    notes = ([] if interval.n == runs else [f"n={interval.n}/{runs}"]) + (
        [f"{interval.censored} censored"] if interval.censored else []
    )
    counted = f" ({', '.join(notes)})" if notes else ""
    if interval.mean is None and interval.beyond is None:
        return "-" + counted
    text = _reached_text(interval.mean, interval.beyond, signed)
    if interval.low is not None and (interval.high is not None or interval.beyond is not None):
        text += f" [{number_text(interval.low, signed)}, {_reached_text(interval.high, interval.beyond, signed)}]"
    return text + counted


def _reached_text(value: float | None, beyond: float | None, signed: bool) -> str:
    """A figure, or where it was not reached, `> ` the longest time observed."""
    return number_text(value, signed) if value is not None else f"> {number_text(beyond)}"


def number_text(value: float | None, signed: bool = False) -> str:
    """A figure to read: whole numbers and large ones without decimals, others to 3 significant digits."""
    if value is None:
        return "-"
    sign = "+" if signed and value > 0 else ""
    if float(value).is_integer() or abs(value) >= 1000:
        return f"{sign}{value:,.0f}"
    return f"{sign}{value:.3g}"
