"""What a sweep's executors share: the command line that runs a run, and what became of it.

Both executors run the same command, `main.py <its options> --run-dir <sweep>/<name> -q`, in the sweep's
current directory: in a process here, forked from one that has the run's modules imported
(explorer/sweep/runner.py, explorer/sweep/forked_runs.py), or on a node of a Ray cluster that shares the file
system (explorer/sweep/ray_executor.py). Either way the run's directory tells how it went.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol
from urllib.parse import quote

from explorer.records.summary import FINISHED
from explorer.sweep.console import SweepConsole
from explorer.sweep.out_dir import REFUSED, SweepOut, run_summary
from explorer.sweep.sweep_file import SweepError, SweepRun

ROOT = Path(__file__).resolve().parent.parent  # the checkout, where main.py is (not there when installed)
STOP_GRACE_SECONDS = 60  # for a run told to stop to write its summary and memories before it is killed
POLL_SECONDS = 0.2
RESOURCE_ATTRIBUTES = "OTEL_RESOURCE_ATTRIBUTES"  # OpenTelemetry's: what every span of a process says of it


class Stop(Protocol):
    """A stop signal noted while the sweep runs: its runs are then stopped."""

    signum: int | None


# What is told of each run as it ends, whatever its status: the tracker's log (explorer/sweep/tracking.py).
Log = Callable[[SweepRun], None]
# An executor: runs the runs, `parallel` at once, until done or stopped, each logged as it ends;
# {run name: status}.
RunAll = Callable[[list[SweepRun], int, SweepOut, Stop, SweepConsole, Log], dict[str, str]]


def claim(run: SweepRun, out: SweepOut, outcomes: dict[str, str], console: SweepConsole, total: int) -> int | None:
    """The run's lock, held, and its earlier attempt removed (SweepOut.claim); None where its place has come to
    hold, since the sweep checked it, what no attempt of it leaves: the run is then refused, and said so
    (one of `total`), and the sweep goes on with the others."""
    try:
        return out.claim(run)
    except SweepError as error:
        outcomes[run.name] = REFUSED
        console.finished(len(outcomes), total, run.name, REFUSED, str(error), {})
        return None


def run_arguments(run: SweepRun, run_dir: Path) -> list[str]:
    """What one run is given after the program: its options, quiet, in its directory."""
    return [*run.arguments, f"--run-dir={run_dir}", "-q"]


def run_command(run: SweepRun, run_dir: Path) -> list[str]:
    """The command line of one run: a normal run of main.py (run_arguments)."""
    main = ROOT / "main.py"
    program = [sys.executable, str(main)] if main.is_file() else [sys.executable, "-m", "explorer"]
    return [*program, *run_arguments(run, run_dir)]


def sweep_resource(run: SweepRun, sweep: Path) -> str:
    """The run's sweep (its `out` directory's name), condition and name as OpenTelemetry resource attributes, as
    OTEL_RESOURCE_ATTRIBUTES takes them (values percent-encoded): under --telemetry otlp, each span of the run
    says which sweep and condition it belongs to."""
    values = {
        "explorer.sweep.name": sweep.name,
        "explorer.sweep.condition": run.condition,
        "explorer.sweep.run": run.name,
    }
    return ",".join(f"{key}={quote(value, safe='')}" for key, value in values.items())


def with_resource(resource: str, environment: Mapping[str, str]) -> dict[str, str]:
    """`environment` with `resource` added to its OTEL_RESOURCE_ATTRIBUTES; the user's own come after, and win."""
    given = environment.get(RESOURCE_ATTRIBUTES)
    return {**environment, RESOURCE_ATTRIBUTES: f"{resource},{given}" if given else resource}


def outcome(run_dir: Path, told_to_stop: bool, stderr: str) -> tuple[str, str | None]:
    """The run's status, its summary's, else failed (or interrupted, when the sweep stopped it); and where it
    did not finish, the last line of its stderr, which says why."""
    status = run_summary(run_dir).get("status") or ("interrupted" if told_to_stop else "failed")
    lines = stderr.strip().splitlines()
    return status, lines[-1] if lines and status not in FINISHED else None
