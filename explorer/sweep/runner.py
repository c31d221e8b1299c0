"""Experiment sweeps: `python main.py --sweep FILE.yaml [--parallel N] [--dry-run]` runs a grid of conditions.

The sweep file (explorer/sweep/sweep_file.py) gives the grid. Each run is `main.py <its options> --run-dir
<sweep>/<name> -q` in a process of its own, N at once, forked from one that imported the run's modules once
(explorer/sweep/forked_runs.py). A run whose summary says it completed, with the
settings the file gives it now, is skipped, so the same command again resumes a sweep; any other
attempt is removed and run again (explorer/sweep/out_dir.py: only such an attempt, never a run still
going, and one sweep at a time in a directory). Ctrl-C, SIGTERM and SIGHUP stop the runs under way
cleanly. At the end the sweep directory gets results.csv (a row per run), conditions.csv and sweep.html (per
condition, the mean and 95% interval of each metric over the seeds, the paired differences from a baseline
condition, and the discovery curves). The runs' pages and sweep.html share one copy of plotly's script there.
With --dry-run every run is checked the same way, the conditions and their runs are listed, and the analysis
plan printed (explorer/sweep/plan.py): nothing runs, and nothing is written (no `out`, no lock), but with
--pilot K, K of the baseline's runs, run first as the sweep's own. With --executor ray (`executor: ray` in
the file) each run is a task on a Ray cluster instead (explorer/sweep/ray_executor.py, imported only then).
With --track mlflow (or `track: mlflow`) the sweep's own process logs each run to MLflow once it has finished
(explorer/sweep/tracking.py), whichever executor ran it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from explorer.records.errors import ConfigError
from explorer.report.page import write_shared_plotly
from explorer.run.signals import STOP_SIGNALS
from explorer.sweep.compare import compare, runs_text
from explorer.sweep.console import SweepConsole
from explorer.sweep.forked_runs import Program, RunForks
from explorer.sweep.launch import (
    POLL_SECONDS,
    STOP_GRACE_SECONDS,
    Log,
    RunAll,
    claim,
    outcome,
    run_arguments,
    sweep_resource,
    with_resource,
)
from explorer.sweep.metrics import sweep_metrics
from explorer.sweep.out_dir import REFUSED, SweepOut, run_summary
from explorer.sweep.overrides import NO_OVERRIDES, Overrides
from explorer.sweep.page import write_sweep_page
from explorer.sweep.plan import analysis_plan, pilot_runs, plan_lines
from explorer.sweep.results import CONDITIONS, RESULTS, run_rows, write_conditions, write_results
from explorer.sweep.sweep_file import Sweep, SweepRun, chosen_tracker, load_sweep, unknown_executor
from explorer.sweep.tidy import write_tables

PAGE = "sweep.html"
EXIT_REFUSED = 2  # a run refused (launch.claim): what is in its place is the user's to move
# The figures shown beside each run on the page.
PAGE_METRICS = (
    "objects_found",
    "object_coverage",
    "cell_coverage",
    "steps_to_90_objects",
    "seconds_to_90_objects",
    "wall_seconds",
)


def run_sweep(
    program: Program,
    path: Path,
    parallel: int,
    dry_run: bool = False,
    executor: str | None = None,
    track: str | None = None,
    overrides: Overrides = NO_OVERRIDES,
    experiment: str | None = None,
    pilot: int | None = None,
) -> int:
    """Run the sweep file at `path`, `parallel` runs at once, each checked as main.py checks it and run by
    `program` (main.py's entry point) in a process of its own; the exit code.
    With `dry_run`, only list its conditions and runs, and its analysis plan (explorer/sweep/plan.py), after
    running the `pilot` runs where it is given. `overrides` (--set, --out) change the file's fixed options
    and `out`. `executor` (else the file's, else local) runs them; with `track` (or the file's), each run is
    logged to it, in the `experiment` given (else one named after `out`)."""
    if parallel < 1:
        raise ConfigError(f"--parallel must be at least 1, not {parallel}")
    sweep = load_sweep(path, overrides)
    # Ray or MLflow missing is one line, before anything runs (a dry run's check included).
    run_all, track = _executor(executor or sweep.executor or "local", program), chosen_tracker(track, sweep)
    _check_experiment(experiment, track)
    out = SweepOut(path, sweep.directory)
    stopped = _run_pilot(sweep, out, pilot, parallel, run_all) if dry_run and pilot is not None else 0
    if stopped:
        return stopped
    if dry_run:
        return _dry_run(sweep, out, _todo(sweep, out, out.check_attempt), piloted=pilot is not None)
    with out.held():  # for the sweep's life: a second sweep in the same directory is refused
        todo = _todo(sweep, out, out.check)
        out.record_grid(sweep.runs)  # once all is checked: a refused sweep leaves the grid as it was
        write_shared_plotly(sweep.directory)  # before the runs, whose pages load it
        return _run_and_report(Path(path), sweep, out, todo, parallel, run_all, track, experiment)


def _check_experiment(experiment: str | None, track: str | None) -> None:
    """--experiment names a tracker's experiment: a ConfigError without a tracker, or for an empty name."""
    if experiment is not None and track is None:
        raise ConfigError(
            "--experiment names the MLflow experiment of a tracked sweep: give --track mlflow too "
            "(or `track: mlflow` in the sweep file)"
        )
    if experiment is not None and not experiment.strip():
        raise ConfigError("--experiment: give the experiment's name")


def _executor(name: str, program: Program) -> RunAll:
    """What runs the runs: processes here, each running `program`, or tasks on a Ray cluster, each running
    main.py (Ray is an optional extra)."""
    problem = unknown_executor(name)
    if problem:
        raise ConfigError(f"--executor: {problem}")
    if name == "local":
        return functools.partial(_run_all, RunForks(program))
    try:
        from explorer.sweep import ray_executor
    except ModuleNotFoundError as error:
        if error.name != "ray" and not str(error.name).startswith("ray."):
            raise
        raise ConfigError(
            "--executor ray needs Ray, which is not installed: pip install -e '.[cluster]' (the extra `cluster`)"
        ) from None
    return ray_executor.run_all


def _todo(sweep: Sweep, out: SweepOut, check: Callable[[SweepRun], None]) -> list[SweepRun]:
    """The runs not complete yet, each passed to `check`; a one-line error, before any run starts, for a grid
    the `out` does not hold, a completed run with other settings, or what `check` refuses."""
    out.check_grid(sweep.runs)
    todo = [run for run in sweep.runs if not out.completed(run)]
    for run in todo:  # one still going, or something else in a run's place, is refused
        check(run)
    return todo


def _run_pilot(sweep: Sweep, out: SweepOut, count: int, parallel: int, run_all: RunAll) -> int:
    """Run `count` of the baseline's runs (plan.pilot_runs) as the sweep runs them, in `out`, whose sweep then
    skips them; 0, or 128 + the stop signal that cut them short. No tracker logs them here: a tracked sweep
    logs them once it runs, as it logs any finished run it has not logged yet."""
    chosen = pilot_runs(sweep, count)
    console = SweepConsole()
    with out.held():  # as the sweep holds it: every run checked, the grid recorded, the shared script written
        _todo(sweep, out, out.check)
        out.record_grid(sweep.runs)
        write_shared_plotly(sweep.directory)
        todo = [run for run in chosen if not out.completed(run)]
        console.say(
            f"Pilot of {runs_text(count)} of {chosen[0].condition} in {out.directory}, kept for the sweep: "
            f"{count - len(todo)} complete already, {len(todo)} to run."
        )
        with _StopRequest() as stop, console.progress(len(todo)):
            run_all(todo, parallel, out, stop, console, lambda run: None)
    if stop.signum is None:
        return 0
    console.say("Pilot stopped. Run the same command again to run the rest of it.")
    return 128 + stop.signum


def _dry_run(sweep: Sweep, out: SweepOut, todo: list[SweepRun], piloted: bool = False) -> int:
    """List each condition and its runs, each run's directory and whether it is complete (skipped) or to run;
    then the analysis plan, its pilot the runs complete already (`piloted`: a pilot's among them)."""
    console = SweepConsole()
    console.say(
        f"Dry run of a sweep of {runs_text(len(sweep.runs))} in {out.directory}: {len(sweep.runs) - len(todo)} complete "
        f"already (would be skipped), {len(todo)} to run. "
        + ("Nothing but the pilot was run." if piloted else "Nothing was run or written.")
    )
    _say_overridden(console, sweep)
    conditions: dict[str, list[SweepRun]] = {}
    for run in sweep.runs:
        conditions.setdefault(run.condition, []).append(run)
    waiting = {run.name for run in todo}
    for condition, runs in conditions.items():
        console.say(f"{condition}: {runs_text(len(runs))}")
        for run in runs:
            console.say(f"  {out.directory / run.name}: {'to run' if run.name in waiting else 'complete (skipped)'}")
    complete = [run for run in sweep.runs if run.name not in waiting]
    for line in plan_lines(analysis_plan(sweep, run_rows(out.directory, complete, {}))):
        console.say(line)
    return 0


def _say_overridden(console: SweepConsole, sweep: Sweep) -> None:
    """What --set and --out changed of the sweep file, where they changed anything."""
    if sweep.overridden:
        console.say(f"Overridden on the command line: {'; '.join(sweep.overridden)}.")


def _run_and_report(
    path: Path,
    sweep: Sweep,
    out: SweepOut,
    todo: list[SweepRun],
    parallel: int,
    run_all: RunAll,
    track: str | None,
    experiment: str | None,
) -> int:
    """Run `todo`, then write results.csv, conditions.csv and sweep.html and say how it went; the exit code."""
    directory, runs = sweep.directory, sweep.runs
    console = SweepConsole()
    console.say(
        f"Sweep of {runs_text(len(runs))} in {directory}: {len(runs) - len(todo)} complete already (skipped), "
        f"{len(todo)} to run" + (f", {min(parallel, len(todo))} at once." if todo else ".")
    )
    _say_overridden(console, sweep)
    with _StopRequest() as stop, _tracking(track, experiment, sweep, console) as log:
        with console.progress(len(todo)):
            outcomes = run_all(todo, parallel, out, stop, console, log)
        rows = run_rows(directory, runs, outcomes, console.say)
        metrics = sweep_metrics(rows, sweep.metric)  # the headline first: the runs' task's, or the file's `metric`
        compared = compare(rows, metrics, sweep.baseline)
        write_results(directory / RESULTS, runs, rows)
        write_conditions(directory / CONDITIONS, compared, metrics)
        not_written = write_tables(directory)  # runs.parquet and steps.parquet, from the files just written
        write_sweep_page(
            directory / PAGE,
            title=f"Sweep {path.name}",
            sweep_file=sweep.text,
            metrics=metrics,
            highlights=PAGE_METRICS,
            compared=compared,
        )
        # Within the tracking: what it could not log is said after the results, as the tracker ends.
        console.table(compared, metrics)
        console.paired_table(compared, metrics)
        console.say(f"Results: {directory / RESULTS}, {directory / CONDITIONS} and {directory / PAGE}")
    if not_written:
        console.say(not_written)
    complete = sum(row.finished for row in rows)
    if stop.signum is not None:
        console.say(
            f"Sweep stopped: {complete} of {runs_text(len(runs))} complete. Run the same command again to run the rest."
        )
        return 128 + stop.signum
    refused = [row.name for row in rows if row.status == REFUSED]
    if refused:
        console.say(
            f"{len(refused)} of {runs_text(len(runs))} refused, their places holding what no attempt of them leaves: "
            f"{', '.join(refused)}. Move that away and run the same command again."
        )
        return EXIT_REFUSED
    if complete < len(runs):
        console.say(f"{len(runs) - complete} of {runs_text(len(runs))} did not complete: see their run.log.")
        return 1
    return 0


def _tracking(
    track: str | None, experiment: str | None, sweep: Sweep, console: SweepConsole
) -> contextlib.AbstractContextManager[Log]:
    """What logs each finished run to the tracker, for the runs' time; with none, what logs nothing."""
    if track is None:
        return contextlib.nullcontext(lambda run: None)
    from explorer.sweep.tracking import mlflow_tracking  # MLflow is imported only when a sweep is tracked

    return mlflow_tracking(sweep, experiment, console.say)


class _StopRequest:
    """Ctrl-C, SIGTERM and SIGHUP noted, not raised, while the sweep runs: it then stops its runs itself."""

    def __init__(self):
        self.signum = None  # the first stop signal: the sweep's exit code is 128 + it

    def __enter__(self):
        self._before = {signum: signal.signal(signum, self._note) for signum in STOP_SIGNALS}
        return self

    def _note(self, signum, frame):
        if self.signum is None:
            self.signum = signum

    def __exit__(self, *exception):
        # Once stopping has begun further signals are ignored, as in a run, so nothing cuts the exit short.
        for signum, handler in self._before.items():
            signal.signal(signum, handler if self.signum is None else signal.SIG_IGN)


class _Child:
    """One run in its own process; its stderr kept in a temporary file, for the line that says why it failed."""

    def __init__(self, forks: RunForks, run: SweepRun, out: SweepOut, lock: int) -> None:
        """Start the run, whose `lock` (launch.claim) it passes on to the run's process and closes here: the run
        holds it as long as it lives, whatever becomes of the sweep."""
        self.run = run
        self.run_dir = out.directory / run.name
        self.told_to_stop = False
        try:
            self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the child; outcome() closes it
            environment = with_resource(sweep_resource(run, out.directory), os.environ)
            self.process = forks.start(run_arguments(run, self.run_dir), environment, self.stderr, lock)
        finally:
            os.close(lock)

    def stop(self):
        self.told_to_stop = True
        self.process.send_signal(signal.SIGINT)

    def outcome(self):
        """The run's status, and why it did not finish (its stderr's last line)."""
        self.stderr.seek(0)
        stderr = self.stderr.read().decode("utf-8", "replace")
        self.stderr.close()
        return outcome(self.run_dir, self.told_to_stop, stderr)


def _run_all(forks, todo, parallel, out, stop, console, log):
    """Run `todo`, `parallel` at once, until done or a stop signal, each `log`ged as it ends; {run name: status}."""
    waiting = deque(todo)
    running: list[_Child] = []
    outcomes: dict[str, str] = {}

    def finish(child):
        status, reason = child.outcome()
        outcomes[child.run.name] = status
        console.finished(len(outcomes), len(todo), child.run.name, status, reason, run_summary(child.run_dir))
        log(child.run)

    try:
        while (waiting or running) and stop.signum is None:
            while waiting and len(running) < parallel:
                run = waiting.popleft()
                lock = claim(run, out, outcomes, console, len(todo))  # an earlier attempt removed: run again
                if lock is not None:
                    running.append(_Child(forks, run, out, lock))
            time.sleep(POLL_SECONDS)
            for child in [child for child in running if child.process.poll() is not None]:
                running.remove(child)
                finish(child)
    finally:  # a stop signal, or an error of the sweep's own: no run is left running
        if running:
            console.say(f"Stopping {runs_text(len(running))} under way: each writes its summary first.")
        for child in running:
            child.stop()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in running:
            if child.process.wait(timeout=max(0.0, deadline - time.monotonic())) is None:
                child.process.kill()
                child.process.wait()
            finish(child)
    return outcomes
