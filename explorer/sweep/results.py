"""What a sweep's runs came to: a row per run from its summary.json, and the two CSV files made of them.

results.csv has a row per run: its options, its directory, its status and its figures. conditions.csv has a
row per condition and metric: how many runs it had and finished, how many the figure counts (n), the mean and
its 95% interval, and, where the sweep names a baseline, the paired difference from it and its interval.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from explorer.records.trace import write_text
from explorer.sweep.compare import CELLS, OBJECTS, SHARE, STEPS, ConditionFigures, Metric, RunRow
from explorer.sweep.out_dir import run_summary
from explorer.sweep.sweep_file import SweepRun

RESULTS, CONDITIONS = "results.csv", "conditions.csv"
# Per run, from its summary.json; the page and conditions.csv compare these over conditions.
METRICS = (
    Metric("objects_found", "objects found", OBJECTS),
    Metric("object_coverage", "share of the objects found", SHARE),
    Metric("steps_to_50_objects", "steps to 50% of the objects", STEPS),
    Metric("steps_to_90_objects", "steps to 90% of the objects", STEPS),
    Metric("seconds_to_90_objects", "simulated seconds to 90% of the objects"),
    Metric("steps_to_100_objects", "steps to all the objects", STEPS),
    Metric("cells_seen", "cells seen", CELLS),
    Metric("cell_coverage", "share of the cells seen", SHARE),
    Metric("overlap_ratio", "overlap (cells seen twice or more / seen)", SHARE),
    Metric("messages_per_agent_step", "messages per agent-step"),
    Metric("messages_read_per_agent_step", "messages read per agent-step"),
    Metric("message_chars_read_per_agent_step", "message characters read per agent-step"),
    Metric("model_calls", "model calls"),
    Metric("prompt_tokens", "prompt tokens"),
    Metric("completion_tokens", "completion tokens"),
    Metric("cost_usd", "cost (USD)"),
    Metric("parse_failures", "parse failures"),
    Metric("errors", "errors"),
    Metric("wall_seconds", "wall time (s)"),
)


def run_rows(directory: Path, runs: list[SweepRun], outcomes: dict[str, str]) -> list[RunRow]:
    """A row per run, in the sweep's order: the ones run now, the ones complete before, the ones never run."""
    rows = []
    for run in runs:
        summary = run_summary(directory / run.name)
        rows.append(
            RunRow(
                run.name,
                run.condition,
                run.world,
                run.factors,
                run.seed,
                summary.get("status") or outcomes.get(run.name, "not run"),
                run_metrics(summary) if summary else {},
                summary.get("discovery_curve") or [],
            )
        )
    return rows


def run_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures a sweep compares, and the world's totals and the steps that bound them, from a run's
    summary.json; None where the run has none."""
    team, llm = summary.get("team") or {}, summary.get("llm") or {}
    to_objects = team.get("steps_to_objects") or {}
    cells_seen, total_cells = team.get("cells_seen"), team.get("total_cells")
    steps = [count for count in (summary.get("steps") or {}).values() if isinstance(count, int)]
    return {
        "objects_found": len(summary.get("objects_discovered") or ()),
        "total_objects": summary.get("total_objects"),
        "object_coverage": summary.get("coverage"),
        "steps_to_50_objects": to_objects.get("50%"),
        "steps_to_90_objects": to_objects.get("90%"),
        "seconds_to_90_objects": (team.get("seconds_to_objects") or {}).get("90%"),
        "steps_to_100_objects": to_objects.get("100%"),
        "steps_run": max(steps, default=None),
        "cells_seen": cells_seen,
        "total_cells": total_cells,
        "cell_coverage": round(cells_seen / total_cells, 4) if cells_seen is not None and total_cells else None,
        "overlap_ratio": team.get("overlap_ratio"),
        "messages_per_agent_step": team.get("messages_per_agent_step"),
        "messages_read_per_agent_step": team.get("messages_read_per_agent_step"),
        "message_chars_read_per_agent_step": team.get("message_chars_read_per_agent_step"),
        "model_calls": llm.get("calls"),
        "prompt_tokens": llm.get("prompt_tokens"),
        "completion_tokens": llm.get("completion_tokens"),
        "cost_usd": llm.get("cost_usd"),
        "parse_failures": llm.get("parse_failures"),
        "errors": llm.get("errors"),
        "wall_seconds": summary.get("wall_seconds"),
    }


def write_results(path: Path, runs: list[SweepRun], rows: list[RunRow]) -> None:
    """results.csv, whole or not at all: the options of each run, its directory, status and figures."""
    options = list(dict.fromkeys(option for run in runs for option in run.values))
    metrics = list(run_metrics({}))  # the compared figures and the world's totals, in the summary's order
    lines = [[*options, "run_dir", "status", *metrics]]
    for run, row in zip(runs, rows):
        figures = ["" if row.metrics.get(m) is None else row.metrics[m] for m in metrics]
        lines.append([*(run.values.get(option, "") for option in options), run.name, row.status, *figures])
    _write_csv(path, lines)


def write_conditions(path: Path, compared: list[ConditionFigures]) -> None:
    """conditions.csv: a row per condition and metric, with its n and interval, and its paired difference."""
    lines: list[list[Any]] = [
        ["condition", "world", "metric", "runs", "finished", "n", "mean", "low", "high"]
        + ["baseline", "pairs", "difference_n", "difference", "difference_low", "difference_high"]
    ]
    for condition in compared:
        for metric in METRICS:
            figure = condition.figures[metric.name]
            difference = (condition.differences or {}).get(metric.name)
            paired = [condition.baseline, condition.pairs] if difference else ["", ""]
            lines.append(
                [condition.label, condition.world, metric.name, len(condition.runs), len(condition.finished)]
                + [figure.n, *_blank(figure.mean, figure.low, figure.high), *paired]
                + (
                    [difference.n, *_blank(difference.mean, difference.low, difference.high)]
                    if difference
                    else [""] * 4
                )
            )
    _write_csv(path, lines)


def _blank(*values: float | None) -> list[Any]:
    return ["" if value is None else round(value, 6) for value in values]


def _write_csv(path: Path, lines: list[list[Any]]) -> None:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(lines)
    write_text(path, text.getvalue())
