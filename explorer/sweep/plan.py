"""A sweep's analysis plan, which `--dry-run` prints before anything runs: how many runs each condition has
and how they nest (5 layouts × 3 seeds), the baseline, the headline metric, the intervals compare.py will
give, and the smallest difference in the headline those runs can detect.

The smallest detectable difference, at 80% power and a two-sided 5% level, for a mean paired difference
over n pairs:

    MDD = (z₀.₉₇₅ + z₀.₈₀) · σ_d / √n  ≈ 2.80 σ_d / √n

σ_d, the spread of one pair's difference, comes from a pilot: runs already finished in `out` (the
baseline's, else every condition's, the spread within each condition pooled), or the runs `--pilot K` has
just run. A pilot of one condition has no pairs, so σ_d is taken as σ·√2, the spread of the difference of
two independent runs: pairing (the same seed and layout) makes it smaller, as far as paired runs are alike.
For a share of runs (success) σ = √(p(1 − p)), p the pilot's share; where the pilot has no spread (every
run succeeded, or none), p = 0.5, the widest a share can have. n is the runs per condition. Where
replicates nest (seeds on layouts) the difference may also vary among the layouts, which a pilot of one
condition cannot show; the plan then gives too the conservative figure with the layouts alone as n.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from explorer.records.errors import ConfigError
from explorer.sweep.compare import Metric, RunRow, number_text, runs_text
from explorer.sweep.metrics import METRICS, SUCCESS, sweep_metrics
from explorer.sweep.sweep_file import SEED, WORLD_SEED, Sweep, SweepRun

POWER, LEVEL = 0.80, 0.05  # the chance of detecting the difference, and the two-sided test's level
REPLICATE_NOUNS = {SEED: ("seed", "seeds"), WORLD_SEED: ("layout", "layouts")}
WIDEST_SHARE = 0.5  # p where a pilot's share has no spread: p(1 - p) is largest there


@dataclass(frozen=True)
class Pilot:
    """The headline's spread in finished runs: what the smallest detectable difference scales with."""

    source: str  # whose runs: a condition's label, or "every condition"
    runs: int  # the values the spread counts
    mean: float
    spread: float  # σ of one run's value, in the metric's units
    assumed: str = ""  # what was taken where the pilot could not say


@dataclass(frozen=True)
class AnalysisPlan:
    """What a sweep will compare, and how finely: the lines a dry run prints (`plan_lines`)."""

    conditions: int
    n: int  # runs per condition (the fewest any has)
    nesting: str  # how the runs repeat a condition: "5 layouts × 3 seeds"
    groups: int  # the outermost replicate key's values (the layouts) where replicates nest; 0 where they do not
    outer: str  # those values' noun: "layouts"
    baseline: str | None  # the baseline as the sweep file names it; None: no paired differences
    headline: Metric
    condition_interval: str  # the interval of each condition's figure
    difference_interval: str  # the interval of its paired difference from the baseline
    pilot: Pilot | None  # None: too few finished runs to estimate the spread from
    piloted: str  # the condition `--pilot K` runs: the baseline's first, else the sweep's first


def analysis_plan(sweep: Sweep, finished: Sequence[RunRow]) -> AnalysisPlan:
    """The plan of `sweep`, its smallest detectable difference estimated from the `finished` runs' rows."""
    conditions = _conditions(sweep.runs)
    nested = len(sweep.replicates) > 1
    counts = _replicate_counts(conditions[0][1], len(sweep.replicates))
    headline = planned_headline(sweep)
    figure, difference = interval_methods(headline, _counted(counts[-1], sweep.replicates[-1]) if nested else "")
    baseline, named = _baseline_runs(sweep), _baseline_text(sweep.baseline)
    pilot = estimate_pilot([row for row in finished if row.condition in baseline], headline, named or baseline[0])
    if pilot is None and len(baseline) < len(conditions):
        pilot = estimate_pilot(finished, headline, "every condition")
    return AnalysisPlan(
        len(conditions),
        min(len(runs) for _, runs in conditions),
        " × ".join(_counted(count, key) for key, count in reversed(list(zip(sweep.replicates, counts)))),
        counts[-1] if nested else 0,
        _noun(counts[-1], sweep.replicates[-1]),
        named,
        headline,
        figure,
        difference,
        pilot,
        baseline[0],
    )


def planned_headline(sweep: Sweep) -> Metric:
    """The metric the sweep's tables will lead with, as sweep_metrics picks it once the runs have run: the
    file's `metric:`, else success where every run has a search task, else the objects found."""
    searching = all(run.settings.get("find") for run in sweep.runs)
    return sweep_metrics([], sweep.metric or (SUCCESS.name if searching else METRICS[0].name))[0]


def interval_methods(metric: Metric, groups: str) -> tuple[str, str]:
    """The intervals compare.py gives `metric`, in words: each condition's (compare._figure) and its paired
    difference's (compare._difference); `groups` names the outermost replicates ("5 layouts") where they nest,
    else "". What the plan says of them is here alone: change it with those two."""
    if metric.proportion:
        return "Wilson's score interval", "Newcombe's interval for paired proportions"
    two_level = f"a two-level bootstrap over the {groups}, then the {{}} within each"
    figure = two_level.format("runs") if groups else "a bootstrap over the runs"
    difference = two_level.format("pairs") if groups else "a bootstrap over the pairs"
    if metric.censored_at:
        never = "a run that never got there"
        return f"the Kaplan–Meier median's interval, {never} censored where it stopped", (
            f"{difference}, {never} counted where it stopped"
        )
    return figure, difference


def detectable_difference(spread: float, n: int) -> float:
    """The smallest mean paired difference that n pairs detect at POWER (two-sided LEVEL), where one run's
    value has the spread σ and a pair's difference σ·√2 (its two runs taken as independent)."""
    normal = NormalDist()
    return (normal.inv_cdf(1 - LEVEL / 2) + normal.inv_cdf(POWER)) * spread * math.sqrt(2) / math.sqrt(n)


def estimate_pilot(rows: Sequence[RunRow], metric: Metric, source: str) -> Pilot | None:
    """The spread of `metric` within each condition of the finished `rows`, pooled; None where it cannot be
    estimated: fewer than two values in a condition, or (for a figure not a share) no spread among them."""
    groups: dict[str, list[float]] = {}
    for row in rows:
        value = metric.counted(row) if row.finished else None  # as the paired differences count it
        if value is not None:
            groups.setdefault(row.condition, []).append(float(value))
    counted = [values for values in groups.values() if len(values) > 1]
    if not counted:
        return None
    runs = sum(len(values) for values in counted)
    mean = statistics.fmean(value for values in counted for value in values)
    if metric.proportion:
        variance = sum(len(values) * _share_variance(values) for values in counted) / runs
        if variance == 0:
            widest = math.sqrt(WIDEST_SHARE * (1 - WIDEST_SHARE))
            return Pilot(source, runs, mean, widest, "the widest a share can have, the pilot's runs all alike")
        return Pilot(source, runs, mean, math.sqrt(variance))
    degrees = sum(len(values) - 1 for values in counted)
    variance = sum((len(values) - 1) * statistics.variance(values) for values in counted) / degrees
    return Pilot(source, runs, mean, math.sqrt(variance)) if variance > 0 else None


def _share_variance(values: list[float]) -> float:
    """p(1 - p) of runs that each succeeded (1) or not (0)."""
    share = statistics.fmean(values)
    return share * (1 - share)


def plan_lines(plan: AnalysisPlan) -> list[str]:
    """The plan in plain lines: what the sweep compares and how, then the smallest difference it can detect."""
    conditions = f"{plan.conditions} condition" + ("s" if plan.conditions != 1 else "")
    compared = f"each condition's by {plan.condition_interval}"
    if plan.baseline is not None:
        compared += f"; the paired differences from {plan.baseline} by {plan.difference_interval}"
    return [
        f"Analysis plan: {conditions} × {runs_text(plan.n)} ({plan.nesting}); "
        f"baseline: {plan.baseline or 'none (no paired differences)'}; headline: {_named(plan.headline)}; "
        f"intervals: {compared}.",
        _detectable_line(plan),
    ]


def _detectable_line(plan: AnalysisPlan) -> str:
    """The smallest difference the plan's n can detect in the headline, or why it is not estimated."""
    name, pilot = plan.headline.name, plan.pilot
    head = f"Smallest difference {runs_text(plan.n)} can detect at {POWER:.0%} power (two-sided {LEVEL:.0%})"
    if pilot is None:
        return (
            f"{head}: not estimated, since the finished runs of {plan.piloted} are too few (two are needed) or all "
            f"alike in {name}. `--dry-run --pilot K` runs K of them first, kept for the sweep, and estimates it."
        )
    difference = detectable_difference(pilot.spread, plan.n)
    share = f", {difference / pilot.mean:.0%} of the pilot's mean" if pilot.mean else ""
    assumed = f", {pilot.assumed}" if pilot.assumed else ""
    line = (
        f"{head}: {number_text(difference)} in {name}{share} (a pilot of {runs_text(pilot.runs)} of "
        f"{pilot.source}: {name} {number_text(pilot.mean)}, sd {number_text(pilot.spread)}{assumed})."
    )
    if plan.groups:
        line += (
            f" If the difference varies among the {plan.groups} {plan.outer}, only they count as n: "
            f"{number_text(detectable_difference(pilot.spread, plan.groups))}."
        )
    return line


def pilot_runs(sweep: Sweep, count: int) -> list[SweepRun]:
    """The `count` runs `--pilot` runs: the first baseline condition's (else the first condition's), one on each
    layout (the outermost replicate key's values) in turn, so that the pilot's spread counts the layouts'."""
    if count < 2:
        raise ConfigError(f"--pilot must be at least 2, not {count}: a spread needs two runs")
    label = _baseline_runs(sweep)[0]
    runs = [run for run in sweep.runs if run.condition == label]
    if count > len(runs):
        raise ConfigError(f"--pilot {count}: the condition it runs, {label}, has {runs_text(len(runs))}")
    turns: dict[str, int] = {}
    order = []
    for run in runs:
        outer = run.replicate[-1] if run.replicate else ""
        turns[outer] = turns.get(outer, -1) + 1
        order.append(turns[outer])
    return [run for _, run in sorted(zip(order, runs), key=lambda pair: pair[0])][:count]


def _conditions(runs: list[SweepRun]) -> list[tuple[str, list[SweepRun]]]:
    """The sweep's conditions in order, each with its runs."""
    conditions: dict[str, list[SweepRun]] = {}
    for run in runs:
        conditions.setdefault(run.condition, []).append(run)
    return list(conditions.items())


def _baseline_runs(sweep: Sweep) -> list[str]:
    """The labels of the baseline's conditions (one per world, say), else the first condition's alone."""
    wanted = (sweep.baseline or {}).items()
    labels = [label for label, runs in _conditions(sweep.runs) if wanted <= runs[0].factors.items()]
    return labels if sweep.baseline else labels[:1]


def _replicate_counts(runs: list[SweepRun], keys: int) -> list[int]:
    """How many values each replicate key takes over a condition's runs, in `replicates:` order."""
    return [len({run.replicate[index] for run in runs}) for index in range(keys)]


def _counted(count: int, key: str) -> str:
    """`5 layouts`, `1 seed`, `4 values of agents`."""
    return f"{count} {_noun(count, key)}"


def _noun(count: int, key: str) -> str:
    """What `count` values of the replicate key `key` are: `layouts`, `seed`, `values of agents`."""
    one, many = REPLICATE_NOUNS.get(key, (f"value of {key}", f"values of {key}"))
    return one if count == 1 else many


def _baseline_text(baseline: dict[str, str] | None) -> str | None:
    """The baseline as the sweep file names it: a condition's name, or its grid values (comm=true)."""
    if baseline is None:
        return None
    return ", ".join(value if key == "condition" else f"{key}={value}" for key, value in baseline.items())


def _named(metric: Metric) -> str:
    """A metric by its name and what it means: `success (share of runs ...)`, `objects_found, objects found`."""
    return metric.label if metric.label.startswith(metric.name) else f"{metric.name}, {metric.label}"
