"""A sweep's sweep.html: its conditions compared metric by metric, with 95% intervals over the seeds.

Only finished runs count (completed, or stopped by a budget); a run stopped or failed is listed with its status
and left out of every mean. Each run's own report.html is a link away.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import quote

from explorer.report.charts import band_chart, interval_chart
from explorer.report.page import write_page
from explorer.run.summary import FINISHED
from explorer.sweep.stats import curve_intervals, mean_interval


def write_sweep_page(path, title, sweep_file, metrics, highlights, runs):
    """`metrics` is [(name, label)] to compare, `highlights` the names shown beside each run; `runs` is
    [{name, condition, status, metrics {name: value}, curve [[step, found], ...]}] in grid order."""
    path = Path(path)
    conditions = list(dict.fromkeys(run["condition"] for run in runs))
    completed = {c: [run for run in runs if run["condition"] == c and run["status"] in FINISHED] for c in conditions}
    table, charts, flat = [], [], []
    for name, label in metrics:
        intervals = [mean_interval(run["metrics"][name] for run in completed[c]) for c in conditions]
        table.append(
            {
                "label": label,
                "cells": [_interval_text(interval, len(completed[c])) for c, interval in zip(conditions, intervals)],
            }
        )
        if not any(run["metrics"][name] for c in conditions for run in completed[c]):
            flat.append(label)  # zero or missing in every run: a chart would show nothing
            continue
        charts.append(
            interval_chart(
                f"metric-{name}",
                label,
                label,
                conditions,
                [i.mean for i in intervals],
                [i.low for i in intervals],
                [i.high for i in intervals],
                [f"{c}: {_interval_text(i)}" for c, i in zip(conditions, intervals)],
            )
        )
    labels = dict(metrics)
    counts = Counter(run["status"] for run in runs)
    write_page(
        path,
        "sweep.html.j2",
        title=title,
        sweep_file=sweep_file,
        statuses=", ".join(f"{n} {status}" for status, n in counts.most_common()),
        total=len(runs),
        conditions=[{"label": c, "runs": len(completed[c])} for c in conditions],
        table=table,
        charts=charts,
        flat=flat,
        discovery=_discovery(conditions, completed),
        run_headers=[labels[name] for name in highlights],
        run_rows=[
            {
                "name": run["name"],
                "condition": run["condition"],
                "status": run["status"],
                "link": _link(path.parent, run["name"]),
                "cells": [_number(run["metrics"].get(name)) for name in highlights],
            }
            for run in runs
        ],
    )


def _discovery(conditions, completed):
    """The objects found per step: per condition the mean over its runs, with a band where there are two or more."""
    curves = {}
    for condition in conditions:
        steps, intervals = curve_intervals(run["curve"] for run in completed[condition])
        if steps:
            banded = all(interval.low is not None for interval in intervals)
            curves[condition] = (
                steps,
                [i.mean for i in intervals],
                [i.low for i in intervals] if banded else None,
                [i.high for i in intervals] if banded else None,
            )
    if not curves:
        return None
    return band_chart("discovery", "Objects found, per step (mean and 95% interval)", "step", "objects found", curves)


def _link(directory, name):
    """The run's report.html, or its summary.json where it has no report, relative to the page; None: neither."""
    for page in ("report.html", "summary.json"):
        if (directory / name / page).is_file():
            return f"{quote(name)}/{page}"
    return None


def _interval_text(interval, runs=None):
    """The mean and its interval, and how many runs they are over unless that is `runs`, as the header says."""
    if interval.mean is None:
        return "-"
    text = _number(interval.mean)
    if interval.low is not None:
        text += f" [{_number(interval.low)}, {_number(interval.high)}]"
    return text if interval.n == runs else f"{text} (n = {interval.n})"


def _number(value):
    if value is None:
        return "-"
    if isinstance(value, int) or abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"
