"""A sweep's `out` directory: one sweep in it at a time, one grid, and nothing removed but its runs' earlier attempts.

What the sweep keeps of itself is in out/.sweep/:

- `lock`, flocked by the sweep for its whole life: a second sweep on the same `out` is refused.
- `<run name>.lock`, flocked for the life of that run's process: the sweep locks it and hands the descriptor
  to the run it starts, then closes its own. The kernel lets go of the lock when the run's process ends,
  however it ends, so a run left going by a sweep killed with SIGKILL (each run has a session of its own)
  is found alive by the next sweep, which refuses to start rather than remove the directory under it.
- `grid.json`, the names of the grid's runs (and each one's condition and factors, for sweep/tidy.py), recorded
  once every run is checked: another grid is refused, since its results.csv and sweep.html would replace this
  one's, but for the same grid with more replicates (seeds, world seeds), whose results cover the recorded runs
  too: more replicates of a finished sweep run only the new ones.

A run's directory is removed only when it is recognisably an earlier attempt of that very run: it holds
nothing but the files a run writes, and its config.json is that run's settings (or empty: the run was
stopped before it wrote them). Anything else in its place is refused, in one line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from explorer.config.episode_options import recorded_world
from explorer.records.errors import ConfigError
from explorer.records.run_files import read_run_json
from explorer.records.run_lock import locked
from explorer.records.shapes import record
from explorer.records.summary import FINISHED
from explorer.records.trace import write_json
from explorer.report.run_report import REPORT
from explorer.run.memories import MEMORY_DIR
from explorer.run.perception_setup import SCREENSHOT_DIR
from explorer.run.run_dir import CLAIM
from explorer.sweep.sweep_file import SweepError, SweepRun

STATE, LOCK, GRID = ".sweep", "lock", "grid.json"
RUN_FILES = (CLAIM, "trace.jsonl", "run.log", "summary.json", REPORT)
RUN_FOLDERS = (MEMORY_DIR, SCREENSHOT_DIR)
PARTIAL = ".partial"  # a file a run was writing when it stopped: summary.json.<random>.partial, say
# Settings a run fills in when they are not given: its config.json may differ from the sweep's there.
RESOLVED_BY_THE_RUN = ("steps", "run_id")
NAMES_IN_AN_ERROR = 3
# The status of a run whose place came to hold, while the sweep went on, what no attempt of it leaves: it is
# not run, and its place is left as it is.
REFUSED = "refused"


class SweepOut:
    """The sweep directory of the sweep file at `sweep_file` (named in every error)."""

    def __init__(self, sweep_file: Path, directory: Path) -> None:
        self.sweep_file = sweep_file
        self.directory = directory
        self.state = directory / STATE

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The directory, made if need be and locked for the sweep's life; SweepError if another sweep holds it."""
        try:
            self.state.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SweepError(self.directory, f"cannot make the sweep directory: {error.strerror}") from None
        if self.state.is_symlink():
            raise SweepError(self.state, "is a symbolic link, not the sweep's own folder")
        lock = self._lock(self.state / LOCK)
        if lock is None:
            raise SweepError(
                self.sweep_file,
                f"{self.directory} is in use by another sweep: wait for it to end, or give this one another `out`",
            )
        try:
            yield
        finally:
            os.close(lock)

    def check_grid(self, runs: list[SweepRun]) -> None:
        """Refuse, in one line, another grid than the one `out` has, unless it only adds replicates; writes nothing."""
        path = self.state / GRID
        if not os.path.lexists(path):
            return
        recorded = (read_json(path) or {}).get("runs")
        if not isinstance(recorded, list):
            raise SweepError(path, "is not a sweep's record of its grid: remove it, or give the sweep another `out`")
        if not _more_seeds_of(recorded, runs):
            listed = ", ".join(map(str, recorded[:NAMES_IN_AN_ERROR])) + (", ..." * (len(recorded) > NAMES_IN_AN_ERROR))
            raise SweepError(
                self.sweep_file,
                f"{self.directory} holds the runs of another grid ({listed}): give the sweep another `out`",
            )

    def record_grid(self, runs: list[SweepRun]) -> None:
        """Record the grid's runs: a later sweep on this `out` must keep every one of them. Each run's condition
        and its factors too, which results.csv does not give apart: for load_sweep's tables (sweep/tidy.py)."""
        conditions = {run.name: {"condition": run.condition, "factors": run.factors} for run in runs}
        write_json(self.state / GRID, {"runs": [run.name for run in runs], "conditions": conditions})

    def completed(self, run: SweepRun) -> bool:
        """True if the run completed before, with the settings it has now; a one-line error if with others."""
        run_dir = self.directory / run.name
        if run_summary(run_dir).get("status") not in FINISHED:
            return False
        problem = _difference(read_json(run_dir / CLAIM) or {}, run, every_setting=False)
        if problem:
            raise SweepError(
                self.sweep_file,
                f"{run_dir} {problem}: give the sweep another `out`, or remove that run to run it again",
            )
        return True

    def check(self, run: SweepRun) -> None:
        """Refuse, in one line, a run still going, or a directory in its place that is no earlier attempt of it."""
        os.close(self._run_lock(run))
        self.check_attempt(run)

    def claim(self, run: SweepRun) -> int:
        """The run's lock, held, and its earlier attempt removed: the descriptor, for the run's process to hold."""
        lock = self._run_lock(run)
        try:
            self.clear_attempt(run)
        except BaseException:
            os.close(lock)
            raise
        return lock

    def clear_attempt(self, run: SweepRun) -> None:
        """Remove an earlier attempt of the run (interrupted, failed, on a node that died); refuse anything else."""
        self.check_attempt(run)
        _remove(self.directory / run.name)

    def _run_lock(self, run: SweepRun) -> int:
        lock = self._lock(self.state / f"{run.name}.lock")
        if lock is None:
            raise SweepError(
                self.sweep_file,
                f"run {run.name} is still going in {self.directory / run.name}, left by a sweep that was killed: "
                "wait for it to end, or end it, and run the sweep again",
            )
        return lock

    def _lock(self, path: Path) -> int | None:
        """A descriptor of the file at `path` (made if need be), exclusively flocked; None if another holds it."""
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as error:
            raise SweepError(path, f"cannot open the sweep's lock: {error.strerror}") from None
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            raise SweepError(path, "is not a regular file, so it cannot be the sweep's lock")
        return descriptor if locked(descriptor) else None

    def check_attempt(self, run: SweepRun) -> None:
        """Refuse, in one line, a directory in the run's place that is no earlier attempt of it; writes nothing."""
        run_dir = self.directory / run.name
        problem = _not_an_attempt(run_dir, run)
        if problem:
            raise SweepError(
                self.sweep_file,
                f"{run_dir} {problem}, so it is no earlier attempt of that run, the only thing a sweep removes: "
                "move it away, or give the sweep another `out`",
            )


def _more_seeds_of(recorded: list[Any], runs: list[SweepRun]) -> bool:
    """True if `runs` hold the recorded ones, in their order, and beside them only other replicates of their
    conditions."""
    names = {str(name) for name in recorded}
    if [run.name for run in runs if run.name in names] != recorded:
        return False  # a run removed, renamed or moved: a changed condition, a seed dropped, the grid reordered
    conditions = {run.condition for run in runs if run.name in names}
    return all(run.condition in conditions for run in runs)  # a new run's condition (but its replicates) is recorded


def _not_an_attempt(run_dir: Path, run: SweepRun) -> str | None:
    """Why `run_dir` is not recognisably an earlier attempt of `run`; None if it is one, or is not there."""
    if not os.path.lexists(run_dir):
        return None
    if run_dir.is_symlink() or not run_dir.is_dir():
        return "is not a directory"
    entries = sorted(run_dir.iterdir())
    if not entries:
        return None
    strange = next((entry.name for entry in entries if not _written_by_a_run(entry)), None)
    if strange is not None:
        return f"holds {strange!r}, which no run writes"
    claim = run_dir / CLAIM
    if not claim.is_file():
        return f"has no {CLAIM}"
    if claim.stat().st_size == 0:  # claimed, and stopped before the run wrote its settings
        return None
    recorded = read_json(claim)
    if recorded is None:
        return f"has a {CLAIM} that is not a run's settings"
    return _difference(recorded, run, every_setting=True)


def _written_by_a_run(entry: Path) -> bool:
    """True for the files and folders a run writes in its directory, and a file it was writing when stopped."""
    if entry.is_symlink():
        return False
    if entry.name in RUN_FOLDERS:
        return entry.is_dir()
    written = entry.name in RUN_FILES or (
        entry.name.endswith(PARTIAL) and any(name in entry.name for name in RUN_FILES)
    )
    return written and entry.is_file()


def _difference(recorded: dict[str, Any], run: SweepRun, every_setting: bool) -> str | None:
    """How the recorded settings differ from the run's, or None; with `every_setting`, a missing one differs."""
    for key, value in run.settings.items():
        if key in RESOLVED_BY_THE_RUN and value is None:
            continue
        if key not in recorded:
            if every_setting:
                return f"has a {CLAIM} without the setting {key!r}"
            continue
        if _as_recorded_now(key, recorded[key]) != value:
            return f"ran with {key} {recorded[key]!r}, not {value!r}"
    return None


def _as_recorded_now(key: str, recorded: Any) -> Any:
    """A recorded setting as this version records it: a shipped world, which earlier versions recorded by its
    path here, by its name (a world recorded by another checkout's path was, and stays, another world)."""
    return recorded_world(recorded) if key == "world" and isinstance(recorded, str) else recorded


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in the regular file at `path`, or None where there is none (yet) or it cannot be read."""
    try:
        return read_run_json(path, record(), "a JSON object")
    except ConfigError:
        return None


def run_summary(run_dir: Path) -> dict[str, Any]:
    """The run's summary.json, or {} where there is none (yet) or it cannot be read."""
    return read_json(run_dir / "summary.json") or {}
