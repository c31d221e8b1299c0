"""A sweep's sweep.html: its conditions compared metric by metric, with 95% intervals over the seeds and the
number of runs each figure counts; paired differences from a baseline condition, and the probability of
improvement over it; charts per world.

Only finished runs count (completed, or stopped by a budget); a run stopped or failed is listed with its status
and left out of every figure. A time some finished runs never reach (the steps to every target) is a Kaplan–Meier
median over all of them, and the page states each rule it counts failures by (explorer/sweep/compare.py). Each
run's own report.html is a link away. The tables lead with the sweep's headline metric; where the runs had a
search task, a chart per world shows the share of runs done by each step. For the headline metric, a chart
across the grid's axes, the paired differences as a forest plot, and with several worlds each condition's
interquartile mean over them (explorer/sweep/facets.py).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from explorer.report.charts import band_chart, interval_chart
from explorer.report.page import write_page
from explorer.sweep.compare import (
    OBJECTS,
    ConditionFigures,
    Metric,
    bounds,
    done_by_step,
    figure_text,
    number_text,
    runs_text,
)
from explorer.sweep.facets import facets
from explorer.sweep.metrics import STEPS_TO_ALL, SUCCESS, leading
from explorer.sweep.stats import Interval, curve_intervals


def write_sweep_page(
    path: Path,
    title: str,
    sweep_file: str,
    metrics: tuple[Metric, ...],
    highlights: tuple[str, ...],
    compared: list[ConditionFigures],
) -> None:
    """`metrics` are compared, the headline first; `highlights` (metric names) are shown beside each run, after
    the headline and a search task's figures; `compared` gives the conditions in the sweep's order, with their
    runs."""
    path = Path(path)
    runs = [row for condition in compared for row in condition.runs]
    counts = Counter(row.status for row in runs)
    named = {metric.name: metric for metric in metrics}
    shown = [named[name] for name in leading(metrics, highlights, compared)]
    write_page(
        path,
        "sweep.html.j2",
        title=title,
        searching=SUCCESS.name in named,
        sweep_file=sweep_file,
        statuses=", ".join(f"{n} {status}" for status, n in counts.most_common()),
        total=runs_text(len(runs)),
        conditions=[{"label": c.label, "finished": len(c.finished), "runs": len(c.runs)} for c in compared],
        table=[
            {"label": m.label, "cells": [figure_text(c.figures[m.name], len(c.finished)) for c in compared]}
            for m in metrics
        ],
        paired=_paired_table(compared, metrics),
        headline=metrics[0].label,
        facets=facets(compared, metrics[0]),
        worlds=_worlds(compared, metrics),
        run_headers=[metric.label for metric in shown],
        run_rows=[
            {
                "name": row.name,
                "condition": row.condition,
                "status": row.status,
                "link": _link(path.parent, row.name),
                "cells": [_run_cell(metric.value(row)) for metric in shown],
            }
            for row in runs
        ],
    )


def _paired_table(compared: list[ConditionFigures], metrics: tuple[Metric, ...]) -> dict[str, Any] | None:
    """Per condition with a baseline, its mean paired difference from it per metric, and per metric with a
    direction its probability of improvement over it; None where none has a baseline."""
    paired = [condition for condition in compared if condition.differences is not None]
    if not paired:
        return None
    return {
        "conditions": [{"label": c.label, "baseline": c.baseline, "pairs": c.pairs} for c in paired],
        "rows": [
            {
                "label": m.label,
                "cells": [figure_text((c.differences or {})[m.name], c.pairs, signed=True) for c in paired],
            }
            for m in metrics
        ],
        "improvement": [
            {
                "label": m.label,
                "cells": [figure_text((c.improvement or {})[m.name], len(c.finished)) for c in paired],
            }
            for m in metrics
            if m.better is not None
        ],
    }


def _worlds(compared: list[ConditionFigures], metrics: tuple[Metric, ...]) -> list[dict[str, Any]]:
    """Per world, the charts of its conditions: the discovery curves, and each metric with a figure to show."""
    worlds = list(dict.fromkeys(condition.world for condition in compared))
    sections = []
    for number, world in enumerate(worlds, start=1):
        conditions = [condition for condition in compared if condition.world == world]
        charts, flat = [], []
        for metric in metrics:
            if not any(row.metrics.get(metric.name) for c in conditions for row in c.finished):
                flat.append(metric.label)  # zero or missing in every run: a chart would show nothing
                continue
            charts.append(_metric_chart(f"metric-{metric.name}-{number}", metric, conditions))
        sections.append(
            {
                "world": world,
                "success": _success(f"success-{number}", conditions),
                "discovery": _discovery(f"discovery-{number}", conditions),
                "charts": charts,
                "flat": flat,
            }
        )
    return sections


def _metric_chart(div_id: str, metric: Metric, conditions: list[ConditionFigures]) -> str:
    """Each condition's figure with its interval; a median not reached has no point (its text says "> 40")."""
    intervals = [condition.figures[metric.name] for condition in conditions]
    intervals = [i if i.mean is not None else Interval(i.n, None, None, None) for i in intervals]
    texts = [f"{c.label}: {figure_text(c.figures[metric.name], len(c.finished))}" for c in conditions]
    return interval_chart(
        div_id,
        metric.label,
        metric.label,
        [c.label for c in conditions],
        [i.mean for i in intervals],
        [i.low for i in intervals],
        [i.high for i in intervals],
        texts,
    )


def _success(div_id: str, conditions: list[ConditionFigures]) -> str | None:
    """The share of runs that had found every target by each step, per condition, with its Wilson band; None
    where no finished run had a search task."""
    curves = {}
    for condition in conditions:
        steps, intervals = done_by_step(condition.finished, STEPS_TO_ALL)
        if steps:
            curves[condition.label] = (
                steps,
                [i.mean for i in intervals],
                [i.low for i in intervals],
                [i.high for i in intervals],
            )
    if not curves:
        return None
    return band_chart(
        div_id, "Runs that had found every target, by step (share and 95% Wilson interval)", "step", "share", curves
    )


def _discovery(div_id: str, conditions: list[ConditionFigures]) -> str | None:
    """The objects found per step: per condition the mean over its runs, with a band where there are two or more."""
    curves = {}
    for condition in conditions:
        found = bounds(OBJECTS, condition.finished)
        steps, intervals = curve_intervals((row.curve for row in condition.finished), found)
        if steps:
            banded = all(interval.low is not None for interval in intervals)
            curves[condition.label] = (
                steps,
                [i.mean for i in intervals],
                [i.low for i in intervals] if banded else None,
                [i.high for i in intervals] if banded else None,
            )
    if not curves:
        return None
    return band_chart(div_id, "Objects found, per step (mean and 95% interval)", "step", "objects found", curves)


def _run_cell(value: Any) -> str:
    """A run's figure beside it: whether it found every target as yes or no, a number as `number_text`."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return number_text(value)


def _link(directory: Path, name: str) -> str | None:
    """The run's report.html, or its summary.json where it has no report, relative to the page; None: neither."""
    for page in ("report.html", "summary.json"):
        if (directory / name / page).is_file():
            return f"{quote(name)}/{page}"
    return None
