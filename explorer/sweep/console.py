"""What the person who started a sweep sees: a line per finished run, with a progress bar and the time left below
them on a terminal, then a table of conditions, and where the sweep names a baseline, a table of paired
differences from it, with the probability of improvement over it on the headline. Both tables lead with the
sweep's headline metric (explorer/sweep/metrics.py), then a search task's figures where the runs had one; their
captions state how failures count."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from explorer.records.run_view import plain
from explorer.sweep.compare import ConditionFigures, Metric, figure_text
from explorer.sweep.metrics import STEPS_TO_ALL, SUCCESS, leading

# The metrics the console shows after the headline, by their column's header.
CONSOLE_METRICS = {
    "objects_found": "objects found",
    "cell_coverage": "share of cells seen",
    "steps_to_90_objects": "steps to 90%",
    "seconds_to_90_objects": "sim. s to 90%",
}
SEARCH_HEADERS = {SUCCESS.name: "success", STEPS_TO_ALL.name: "steps to all targets"}
SUCCESS_NOTE = "success: the share of the finished runs that found every target, with its 95% Wilson interval"
STEPS_NOTE = (
    "steps to a share or a target: the Kaplan–Meier median over every finished run, a run that never got there "
    "censored at its last step (> 60: not reached by step 60)"
)
PAIRED_NOTE = "a run that never got there counts at its last step (a lower bound)"
NEWCOMBE_NOTE = "success: the difference in shares, with Newcombe's interval for paired proportions"
IMPROVEMENT_NOTE = "the chance a run beats a baseline run, ties half, per layout (rliable's); 0.5: no better"
CONDITION_WIDTH = 12  # at least: the figures' columns wrap before the condition's name is squeezed out
PIPE_WIDTH = 160  # into a file or a pipe, which has no width to fit: the tables' figures are not cut into lines


class SweepConsole:
    def __init__(self) -> None:
        self.console = Console(markup=False, emoji=False, highlight=False)
        if not self.console.is_terminal:
            self.console.width = PIPE_WIDTH
        self._progress: Progress | None = None

    @contextlib.contextmanager
    def progress(self, total: int) -> Iterator[None]:
        """A bar of the `total` runs to run, with the time elapsed and left, while they run; `finished` moves it.
        Only on a terminal: into a file or a pipe the lines per run say as much. Gone once the runs are."""
        columns = (TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=self.console, transient=True, disable=not self.console.is_terminal) as bar:
            bar.add_task("runs", total=total)
            self._progress = bar
            try:
                yield
            finally:
                self._progress = None

    def say(self, text: str) -> None:
        self.console.print(plain(text), soft_wrap=True)  # a path or an error is not cut into lines

    def finished(
        self, done: int, total: int, name: str, status: str, reason: str | None, summary: dict[str, Any]
    ) -> None:
        found = (
            f", {len(summary.get('objects_discovered') or ())} of {summary.get('total_objects')} objects"
            if summary.get("total_objects") is not None
            else ""
        )
        search = summary.get("search") or {}
        if search.get("targets"):
            targets = f", {len(search.get('targets_found') or ())} of {len(search['targets'])} targets"
            found += targets + (f" by step {search['steps_to_all']}" if search.get("all_found") else "")
        self.say(f"[{done}/{total}] {name}: {status}{found}" + (f" ({reason})" if reason else ""))
        if self._progress is not None:
            self._progress.advance(self._progress.task_ids[0])

    def table(self, compared: list[ConditionFigures], metrics: tuple[Metric, ...]) -> None:
        """Per condition: the mean and 95% interval of each figure, and n where it counts fewer runs."""
        table = Table(
            title="Per condition: mean [95% interval] over the finished runs (completed, or out of budget); "
            "n=k/m where a figure counts k of the m finished runs"
        )
        shown = _shown(metrics, compared=compared)
        table.add_column("condition", overflow="fold", min_width=CONDITION_WIDTH)
        for header in ("finished", *shown.values()):
            table.add_column(header, overflow="fold")
        table.caption = "; ".join(
            [*([SUCCESS_NOTE] if SUCCESS.name in shown else []), *([STEPS_NOTE] if _censored(metrics, shown) else [])]
        )
        for condition in compared:
            finished = len(condition.finished)
            table.add_row(
                plain(condition.label),
                f"{finished} of {len(condition.runs)}",
                *(figure_text(condition.figures[m], finished) for m in shown),
            )
        self.console.print(table)

    def paired_table(self, compared: list[ConditionFigures], metrics: tuple[Metric, ...]) -> None:
        """Per condition with a baseline: its mean difference from it, seed by seed, with its 95% interval; then
        the probability that it does better, on the headline and the search figures."""
        paired = [condition for condition in compared if condition.differences is not None]
        if not paired:
            return
        shown = _shown(metrics, compared=compared)
        notes = [PAIRED_NOTE, *([NEWCOMBE_NOTE] if SUCCESS.name in shown else [])]
        table = Table(
            title="Paired differences from the baseline, on the seeds both finished: mean [95% interval]",
            caption="; ".join(notes),
        )
        table.add_column("condition minus its baseline", overflow="fold", min_width=CONDITION_WIDTH)
        for header in ("pairs", *shown.values()):
            table.add_column(header, overflow="fold")
        for condition in paired:
            differences = condition.differences or {}
            table.add_row(
                plain(f"{condition.label} minus {condition.baseline}"),
                str(condition.pairs),
                *(figure_text(differences[m], condition.pairs, signed=True) for m in shown),
            )
        self.console.print(table)
        self._improvement_table(paired, metrics)

    def _improvement_table(self, paired: list[ConditionFigures], metrics: tuple[Metric, ...]) -> None:
        """Per condition with a baseline: the probability of improvement over it on the headline and the search
        figures that have a direction; nothing where none has one."""
        better = {m.name for m in metrics if m.better is not None}
        shown = {name: header for name, header in _shown(metrics, ()).items() if name in better}
        if not shown:
            return
        table = Table(title="Probability of improvement over the baseline [95% interval]", caption=IMPROVEMENT_NOTE)
        table.add_column("condition over its baseline", overflow="fold", min_width=CONDITION_WIDTH)
        for header in shown.values():
            table.add_column(header, overflow="fold")
        for condition in paired:
            improvement = condition.improvement or {}
            table.add_row(
                plain(f"{condition.label} over {condition.baseline}"),
                *(figure_text(improvement[m], len(condition.finished)) for m in shown),
            )
        self.console.print(table)


def _censored(metrics: tuple[Metric, ...], shown: dict[str, str]) -> bool:
    """True where a table shows a time some runs never reach (a Kaplan–Meier median)."""
    return any(metric.censored_at for metric in metrics if metric.name in shown)


def _shown(
    metrics: tuple[Metric, ...],
    after: tuple[str, ...] = tuple(CONSOLE_METRICS),
    compared: Sequence[ConditionFigures] = (),
) -> dict[str, str]:
    """The metrics a table shows, by name, with their columns' headers: the headline first, the search
    figures, then those of `after` that some condition of `compared` counts two runs or more in."""
    headers = {**CONSOLE_METRICS, **SEARCH_HEADERS}
    labels = {metric.name: metric.label for metric in metrics}
    return {name: headers.get(name) or labels[name] for name in leading(metrics, after, compared)}
