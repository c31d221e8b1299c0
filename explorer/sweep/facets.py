"""sweep.html read across the grid's axes, for the headline metric: a chart with a column per world (or per the
first other axis with several values) and a colour per the other axes' values; the paired differences from
the baseline as a forest plot; and each condition over the worlds as one interquartile mean (IQM) with its
stratified bootstrap interval, as rliable reports an aggregate over tasks."""

from __future__ import annotations

from typing import Any

from explorer.report.charts import facet_chart, interval_chart
from explorer.sweep.compare import ConditionFigures, Metric, bounds, figure_text
from explorer.sweep.stats import stratified_iqm_interval
from explorer.sweep.sweep_file import CONDITION

WORLD = "world"  # the grid's axis of worlds; a world set by a named condition varies with `condition` instead


def facets(compared: list[ConditionFigures], headline: Metric) -> dict[str, Any]:
    """The headline metric's faceted chart, its forest plot (None without a baseline) and its IQM over worlds
    (None with one world), for sweep.html."""
    placed = _placed(compared)
    return {
        "chart": _facet_chart(placed, headline),
        "forest": _forest(compared, headline),
        "iqm": _over_worlds(placed, headline) if len({c.world for c in compared}) > 1 else None,
    }


def _placed(compared: list[ConditionFigures]) -> list[tuple[str, str, ConditionFigures]]:
    """Each condition's column and colour: the column its world where the sweep has several, else the first
    grid axis with several values (one column where there are not two such axes); the colour the values of the
    other axes that vary (a named condition by its name), or the condition's label where none does."""
    factors = [condition.runs[0].factors for condition in compared]
    varying = [key for key in dict.fromkeys(k for f in factors for k in f) if len({f.get(key) for f in factors}) > 1]
    if len({condition.world for condition in compared}) > 1:
        columns, across = [condition.world for condition in compared], WORLD
    elif len(varying) > 1:
        across = next(key for key in varying if key != CONDITION)
        columns = [f"{across}={f.get(across)}" for f in factors]
    else:
        columns, across = ["" for _ in compared], ""
    placed = []
    for column, condition, its in zip(columns, compared, factors):
        shown = [str(its[k]) if k == CONDITION else f"{k}={its[k]}" for k in varying if k != across and k in its]
        placed.append((column, ", ".join(shown) or condition.label, condition))
    return placed


def _facet_chart(placed: list[tuple[str, str, ConditionFigures]], metric: Metric) -> str:
    columns: dict[str, dict[str, tuple[Any, ...]]] = {}
    for column, colour, condition in placed:
        interval = condition.figures[metric.name]
        if interval.mean is not None:  # no finished run has the figure: nothing to draw
            note = f"{condition.label}: {figure_text(interval, len(condition.finished))}"
            columns.setdefault(column, {})[colour] = (interval.mean, interval.low, interval.high, note)
    return facet_chart("facets", f"{metric.label}, by condition (mean and 95% interval)", metric.label, columns)


def _forest(compared: list[ConditionFigures], metric: Metric) -> str | None:
    """Each condition's mean paired difference from its baseline, with its 95% interval, against a line at 0."""
    paired = [c for c in compared if c.differences and c.differences[metric.name].mean is not None]
    if not paired:
        return None
    differences = [(c.differences or {})[metric.name] for c in paired]
    return interval_chart(
        "forest",
        f"{metric.label}: paired difference from the baseline (mean and 95% interval)",
        "difference",
        [f"{c.label} − {c.baseline}" for c in paired],
        [d.mean for d in differences],
        [d.low for d in differences],
        [d.high for d in differences],
        [f"{c.label} − {c.baseline}: {figure_text(d, c.pairs, signed=True)}" for c, d in zip(paired, differences)],
        reference=0,
    )


def _over_worlds(placed: list[tuple[str, str, ConditionFigures]], metric: Metric) -> list[dict[str, str]]:
    """Per colour (a condition but its world), the IQM of its finished runs in every world, resampled within
    each world; a run that never got where a censored metric counts at its last step."""
    rows = []
    for colour in dict.fromkeys(colour for _, colour, _ in placed):
        conditions = [condition for _, its, condition in placed if its == colour]
        runs = [row for condition in conditions for row in condition.finished]
        strata = [[metric.counted(row) for row in condition.finished] for condition in conditions]
        interval = stratified_iqm_interval(strata, bounds(metric.bound, runs))
        rows.append({"label": colour, "worlds": str(len(conditions)), "cell": figure_text(interval, len(runs))})
    return rows
