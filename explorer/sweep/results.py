"""What a sweep's runs came to: a row per run from its summary.json, and the two CSV files made of them.

results.csv has a row per run: its options, its directory, its status and its figures, first a search task's
where any run had one (all_found, steps_to_all, steps_to_<target>, spl). conditions.csv has a row per condition and
metric, the headline first: what its figure is (`statistic`: a mean, a share of runs, or a Kaplan–Meier median),
how many runs it had and finished, how many the figure counts (n) and, for a median, how many of those were
censored, the figure and its 95% interval, and, where the sweep names a baseline, the paired difference from it
with its interval, and the probability of improvement over it with its interval.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explorer.records.summary import CELL_SHARES
from explorer.records.summary_shape import misshapen_field
from explorer.records.trace import write_text
from explorer.sweep.compare import ConditionFigures, Metric, RunRow
from explorer.sweep.out_dir import REFUSED, run_summary
from explorer.sweep.sweep_file import SweepRun

RESULTS, CONDITIONS = "results.csv", "conditions.csv"


MISSHAPEN = "misshapen"  # the status of a run whose summary.json has a field of the wrong shape


def run_rows(
    directory: Path, runs: list[SweepRun], outcomes: dict[str, str], warn: Callable[[str], object] = print
) -> list[RunRow]:
    """A row per run, in the sweep's order: the ones run now, the ones complete before, the ones never run.
    A run whose summary has a field of the wrong shape is marked MISSHAPEN, without figures, and `warn`ed of."""
    rows = []
    for run in runs:
        # A refused run's place holds what is not its own: no summary there is its.
        summary = {} if outcomes.get(run.name) == REFUSED else run_summary(directory / run.name)
        field = misshapen_field(summary)
        if field is not None:
            warn(f"{directory / run.name}: summary.json's `{field}` is not what a run writes: left out of the figures")
            summary = {"status": MISSHAPEN}
        rows.append(
            RunRow(
                run.name,
                run.condition,
                run.world,
                run.factors,
                run.replicate,
                summary.get("status") or outcomes.get(run.name, "not run"),
                run_metrics(summary) if summary else {},
                summary.get("discovery_curve") or [],
                tuple((summary.get("search") or {}).get("targets") or ()),
            )
        )
    return rows


def run_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures a sweep compares, and the world's totals and the steps that bound them, from a run's
    summary.json; None where the run has none."""
    team, llm = summary.get("team") or {}, summary.get("llm") or {}
    to_objects, to_cells = team.get("steps_to_objects") or {}, team.get("steps_to_cells") or {}
    walked_to_cells = team.get("distance_to_cells") or {}
    cells_seen, total_cells = team.get("cells_seen"), team.get("total_cells")
    steps = [count for count in (summary.get("steps") or {}).values() if isinstance(count, int)]
    return {
        **_search_figures(summary.get("search")),
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
        **{f"steps_to_{share}_cells": to_cells.get(f"{share}%") for share in CELL_SHARES},
        "distance": team.get("distance"),
        **{f"distance_to_{share}_cells": walked_to_cells.get(f"{share}%") for share in CELL_SHARES},
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


def _search_figures(search: dict[str, Any] | None) -> dict[str, Any]:
    """A search task's outcome, as results.csv gives it: whether every target was found, the step by which
    they all were (None where not), the step each was first found at, and SPL; {} without a task."""
    if not search:
        return {}
    to_target = search.get("steps_to_target") or {}
    return {
        "all_found": bool(search.get("all_found")),
        "steps_to_all": search.get("steps_to_all"),
        **{f"steps_to_{target}": to_target.get(target) for target in search.get("targets") or ()},
        "spl": search.get("spl"),
    }


def write_results(path: Path, runs: list[SweepRun], rows: list[RunRow]) -> None:
    """results.csv, whole or not at all: the options of each run, its directory, status and figures."""
    options = list(dict.fromkeys(option for run in runs for option in run.values))
    figures = list(run_metrics({}))  # the compared figures and the world's totals, in the summary's order
    searched = dict.fromkeys(name for row in rows for name in row.metrics if name not in figures)
    metrics = [*searched, *figures]  # a search task's figures first, where any run had one
    lines = [[*options, "run_dir", "status", *metrics]]
    for run, row in zip(runs, rows):
        cells = [_cell(row.metrics.get(m)) for m in metrics]
        lines.append([*(run.values.get(option, "") for option in options), run.name, row.status, *cells])
    _write_csv(path, lines)


CONDITION_COLUMNS = (
    ["condition", "world", "metric", "statistic", "runs", "finished", "n", "censored", "mean", "low", "high"]
    + ["baseline", "pairs", "difference_n", "difference", "difference_low", "difference_high"]
    + ["probability_of_improvement", "probability_of_improvement_low", "probability_of_improvement_high"]
)


def write_conditions(path: Path, compared: list[ConditionFigures], metrics: tuple[Metric, ...]) -> None:
    """conditions.csv: a row per condition and metric, the headline first, with its n and interval (success:
    the share of runs, with Wilson's interval; a time some runs never reach: the Kaplan–Meier median, blank
    where not reached), its paired difference and its probability of improvement."""
    lines: list[list[Any]] = [CONDITION_COLUMNS]
    for condition in compared:
        for metric in metrics:
            figure = condition.figures[metric.name]
            difference = (condition.differences or {}).get(metric.name)
            improvement = (condition.improvement or {}).get(metric.name)
            lines.append(
                [condition.label, condition.world, metric.name, metric.statistic]
                + [len(condition.runs), len(condition.finished), figure.n, _blank(figure.censored)[0]]
                + _blank(figure.mean, figure.low, figure.high)
                + ([condition.baseline, condition.pairs] if difference else ["", ""])
                + (
                    [difference.n, *_blank(difference.mean, difference.low, difference.high)]
                    if difference
                    else [""] * 4
                )
                + (_blank(improvement.mean, improvement.low, improvement.high) if improvement else [""] * 3)
            )
    _write_csv(path, lines)


def _cell(value: Any) -> Any:
    """A run's figure as results.csv gives it: empty where it has none, true or false as a sweep file writes."""
    if value is None:
        return ""
    return str(value).lower() if isinstance(value, bool) else value


def _blank(*values: float | None) -> list[Any]:
    return ["" if value is None else round(value, 6) for value in values]


def _write_csv(path: Path, lines: list[list[Any]]) -> None:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(lines)
    write_text(path, text.getvalue())
