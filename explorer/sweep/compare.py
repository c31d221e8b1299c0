"""A sweep's conditions compared: per condition each metric's mean over its finished runs with its interval and
how many runs it counts, and its paired differences against its baseline condition, replicate by replicate.

A condition's runs are its replicates: its seeds, or with `replicates: [seed, world-seed]` its seeds on each
layout. Over one replicate key the interval is a bootstrap over the runs; over two or more, a two-level one
(stats.hierarchical_interval) over the last key's values (the layouts), then the runs within each.

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
    proportion_interval,
)

# What limits a metric: the share of something, the world's objects or cells, the run's steps; else 0 or more.
SHARE, OBJECTS, CELLS, STEPS = "share", "objects", "cells", "steps"


@dataclass(frozen=True)
class Metric:
    name: str  # as conditions.csv and a sweep file's `metric:` name it; its column in results.csv unless `column`
    label: str  # as the page and the console name it
    bound: str | None = None  # SHARE, OBJECTS, CELLS or STEPS; None: 0 or more
    proportion: bool = False  # a share of runs, each run yes or no: Wilson's interval, not the bootstrap's
    column: str | None = None  # its column in results.csv where that is not its name (success: all_found)
    aliases: tuple[str, ...] = ()  # other names a sweep file's `metric:` may give it

    def value(self, row: RunRow) -> Any:
        """The run's figure; None where it has none."""
        return row.metrics.get(self.column or self.name)


@dataclass(frozen=True)
class RunRow:
    """One run of the sweep as it ended (or not)."""

    name: str  # its directory in the sweep's
    condition: str  # its condition's label
    world: str  # its world, as the page groups conditions by it
    factors: dict[str, str]  # what makes its condition: its name, the grid's values but the replicates'
    replicate: tuple[Any, ...]  # its replicate keys' values, the outermost last: what pairs it with other runs
    status: str  # completed, budget_exhausted, interrupted, failed, refused (sweep/launch.py) or not run
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
    """The metric's mean over the runs that have it, with its interval: Wilson's for a share of runs."""
    if metric.proportion:
        outcomes = [bool(value) for value in map(metric.value, runs) if value is not None]
        return proportion_interval(sum(outcomes), len(outcomes))
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
    mine = [pair[0] for pair in pairs]
    differences = {}
    for metric in metrics:
        limits = bounds(metric.bound, [row for pair in pairs for row in pair])
        values = [(metric.value(a), metric.value(b)) for a, b in pairs]
        differences[metric.name] = _difference(values, mine, limits)
    return ConditionFigures(
        condition.label,
        condition.world,
        condition.runs,
        condition.finished,
        condition.figures,
        base.label,
        len(pairs),
        differences,
    )


def _difference(values: list[tuple[Any, Any]], runs: list[RunRow], limits: Bounds) -> Interval:
    """The mean paired difference of the (mine, its) values of `runs`' pairs, with its interval as _figure's."""
    if _flat(runs):
        return paired_interval(values, limits)
    differences = [None if None in pair else pair[0] - pair[1] for pair in values]
    return hierarchical_interval(_by_outer(differences, runs), limits.of_differences())


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
    """`mean [low, high]`, and `(n=k/runs)` where it counts fewer than the `runs` it could: "33 (n=2/3)"."""
    counted = "" if interval.n == runs else f" (n={interval.n}/{runs})"
    if interval.mean is None:
        return "-" + counted
    text = number_text(interval.mean, signed)
    if interval.low is not None and interval.high is not None:
        text += f" [{number_text(interval.low, signed)}, {number_text(interval.high, signed)}]"
    return text + counted


def number_text(value: float | None, signed: bool = False) -> str:
    """A figure to read: whole numbers and large ones without decimals, others to 3 significant digits."""
    if value is None:
        return "-"
    sign = "+" if signed and value > 0 else ""
    if float(value).is_integer() or abs(value) >= 1000:
        return f"{sign}{value:,.0f}"
    return f"{sign}{value:.3g}"
