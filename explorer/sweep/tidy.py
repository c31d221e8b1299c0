"""A sweep's results as tidy tables, for pandas: `load_sweep(out)` gives a row per run, a row per condition and
a row per run and step, with a column per option and per metric, so a plot needs no parsing.

- `runs`: results.csv, with `condition` (the combined name conditions.csv gives) after `run_dir`.
- `conditions`: conditions.csv a row per condition, with a column per grid axis beside the combined name, then
  per metric its figure (the metric's name: a mean, a share, or a Kaplan–Meier median) and `_n`, `_low`, `_high`
  (`_censored` for a median; `_difference...` with a baseline, and `_probability_of_improvement...` for a
  metric with a direction).
- `steps`: per run and step, what the team had by then, from the curves of the run's summary.json (bounded:
  never the trace): objects found, cells seen, targets found (a search task's), messages sent, and the
  distance (cells the team had moved when the step began).

The sweep writes `runs` and `steps` as runs.parquet and steps.parquet where pyarrow is installed. This module
alone imports pandas and pyarrow, lazily: a sweep without the `data` extra runs as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.records.errors import ConfigError
from explorer.records.summary_shape import misshapen_field
from explorer.records.trace import write_file
from explorer.sweep.out_dir import GRID, STATE, read_json, run_summary
from explorer.sweep.results import CONDITIONS, RESULTS
from explorer.sweep.sweep_file import CONDITION

if TYPE_CHECKING:
    import pandas

RUNS_PARQUET, STEPS_PARQUET = "runs.parquet", "steps.parquet"
INSTALL = "pip install -e '.[data]'"
# A named condition's name, which results.csv calls `condition`: here `condition` is the combined name.
NAMED = "condition_name"
STEP_COLUMNS = (
    "run_dir",
    "condition",
    "step",
    "objects_found",
    "cells_seen",
    "targets_found",
    "messages_sent",
    "distance",
)
FIGURES = ("n", "censored", "mean", "low", "high")
DIFFERENCES = ("difference_n", "difference", "difference_low", "difference_high")
IMPROVEMENT = ("probability_of_improvement", "probability_of_improvement_low", "probability_of_improvement_high")
SOME_METRICS = ("censored", *IMPROVEMENT)  # a metric's column of these only where it has the figure
COUNTS = ("_n", "_censored")  # columns of whole numbers of runs
PER_CONDITION = ("world", "runs", "finished", "baseline", "pairs")


@dataclass(frozen=True)
class SweepData:
    """A sweep's tables (pandas DataFrames): a row per run, per condition, and per run and step."""

    runs: pandas.DataFrame
    conditions: pandas.DataFrame
    steps: pandas.DataFrame


def load_sweep(out: str | Path) -> SweepData:
    """The tables of the sweep directory `out`, from runs.parquet and steps.parquet where they are as new as
    its results.csv, else from its files; ConfigError where `out` is no sweep directory or pandas is missing."""
    pd = _pandas()
    directory = Path(out)
    if not (directory / RESULTS).is_file() or not (directory / CONDITIONS).is_file():
        raise ConfigError(f"{directory} is not a sweep directory: it has no {RESULTS} and {CONDITIONS}")
    labels = _labels(directory)
    if _parquet_is_current(directory):
        runs, steps = pd.read_parquet(directory / RUNS_PARQUET), pd.read_parquet(directory / STEPS_PARQUET)
    else:
        runs = _runs(pd, directory, labels)
        steps = _steps(pd, directory, runs)
    return SweepData(runs, _conditions(pd, directory, runs, labels), steps)


def write_tables(directory: Path) -> str | None:
    """runs.parquet and steps.parquet, from the files the sweep has just written; where pyarrow is missing,
    nothing, and the line that says so."""
    try:
        pd = _pandas()
    except ConfigError:
        return f"{RUNS_PARQUET} and {STEPS_PARQUET} not written: pandas and pyarrow are not installed ({INSTALL})"
    runs = _runs(pd, directory, _labels(directory))
    for name, table in ((RUNS_PARQUET, runs), (STEPS_PARQUET, _steps(pd, directory, runs))):
        write_file(directory / name, lambda file, table=table: table.to_parquet(file, index=False))
    return None


def _pandas() -> Any:
    """pandas, where it and pyarrow are installed (the optional `data` extra, imported only here: a sweep runs
    without it); else ConfigError, in one line."""
    try:
        import pandas
        import pyarrow  # noqa: F401 -- pandas' parquet needs it: missing, it is one line here, not deep in pandas
    except ImportError:
        raise ConfigError(f"load_sweep needs pandas and pyarrow, the `data` extra: {INSTALL}") from None
    return pandas


def _parquet_is_current(directory: Path) -> bool:
    """True where both parquet files were written after the last results.csv (a sweep without pyarrow since,
    or one stopped between the two, leaves older ones)."""
    results = (directory / RESULTS).stat().st_mtime_ns
    tables = [directory / RUNS_PARQUET, directory / STEPS_PARQUET]
    return all(path.is_file() and path.stat().st_mtime_ns >= results for path in tables)


def _labels(directory: Path) -> dict[str, dict[str, Any]]:
    """{run name: {"condition": its combined name, "factors": {axis: value}}}, as the sweep recorded its grid;
    {} for a sweep recorded before it kept them (its next run of the same command records them)."""
    recorded = (read_json(directory / STATE / GRID) or {}).get("conditions")
    return recorded if isinstance(recorded, dict) else {}


def _runs(pd: Any, directory: Path, labels: dict[str, dict[str, Any]]) -> pandas.DataFrame:
    """results.csv (true and false as booleans, empty cells as missing), its condition beside each run."""
    runs = pd.read_csv(directory / RESULTS).rename(columns={CONDITION: NAMED})
    condition = runs["run_dir"].map(lambda name: (labels.get(name) or {}).get("condition"))
    runs.insert(runs.columns.get_loc("run_dir") + 1, "condition", condition)
    return runs


def _steps(pd: Any, directory: Path, runs: pandas.DataFrame) -> pandas.DataFrame:
    """A row per run and step of the runs that have a summary (a run never run has none)."""
    rows = [
        row
        for name, condition in zip(runs["run_dir"], runs["condition"])
        for row in _run_steps(name, condition, run_summary(directory / name))
    ]
    counts = dict.fromkeys(STEP_COLUMNS[3:], "Int64")  # whole numbers, missing where a run has none
    return pd.DataFrame(rows, columns=list(STEP_COLUMNS)).astype(counts)


def _run_steps(name: str, condition: Any, summary: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The run's rows: the team's counts once each step was committed. Targets found only with a search task,
    cells, messages and distance only from a summary that has their curves; else missing. The distance is the
    team's cells moved when the step began (cells_by_distance has a point per step of cells_curve, in order).
    None from a summary with a field of the wrong shape (results.csv marks that run)."""
    if misshapen_field(summary) is not None:
        return []
    team = summary.get("team") or {}
    cells, messages = dict(team.get("cells_curve") or ()), dict(team.get("messages_curve") or ())
    by_distance = team.get("cells_by_distance") or ()
    distance = {step: walked for (step, _), (walked, _) in zip(team.get("cells_curve") or (), by_distance)}
    search = summary.get("search") or {}
    found_at = [at for at in (search.get("steps_to_target") or {}).values() if at is not None]
    return [
        (
            name,
            condition,
            step,
            found,
            cells.get(step),
            sum(at <= step for at in found_at) if search else None,
            messages.get(step),
            distance.get(step),
        )
        for step, found in summary.get("discovery_curve") or ()
    ]


def _conditions(pd: Any, directory: Path, runs: pandas.DataFrame, labels: dict[str, Any]) -> pandas.DataFrame:
    """conditions.csv a row per condition: its axes (their values as in `runs`), its counts, then per metric
    its figures in columns."""
    long = pd.read_csv(directory / CONDITIONS)
    metrics = list(dict.fromkeys(long["metric"]))
    figures = FIGURES + (DIFFERENCES + IMPROVEMENT if long["baseline"].notna().any() else ())
    figures = tuple(figure for figure in figures if figure in long.columns)  # one written before had fewer
    wide = long.pivot(index="condition", columns="metric", values=list(figures))
    kept = [(f, m) for m in metrics for f in figures if f not in SOME_METRICS or wide[(f, m)].notna().any()]
    wide = wide[kept]
    wide.columns = [metric if figure == "mean" else f"{metric}_{figure}" for figure, metric in wide.columns]
    wide = wide.astype({column: "Int64" for column in wide.columns if column.endswith(COUNTS)})  # counts of runs
    counts = long.groupby("condition", sort=False)[list(PER_CONDITION)].first()  # first: skips the blanks
    counts = counts.rename(columns={"world": "world_label"})  # `world` is the grid's axis, where it is one
    names = dict.fromkeys(axis for label in labels.values() for axis in label["factors"])
    axes = [NAMED if axis == CONDITION else axis for axis in names]
    per_condition = runs[["condition", *axes]].dropna(subset=["condition"]).drop_duplicates("condition")
    table = counts.join(per_condition.set_index("condition"), how="left").join(wide)
    return table.copy()[[*axes, *counts.columns, *wide.columns]].reset_index()  # copy: one block, not one a column
