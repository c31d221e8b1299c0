"""A sweep's runs logged to MLflow (`--track mlflow`, or `track: mlflow` in the sweep file): the one module
that imports mlflow, and only when a sweep is tracked.

The sweep is a parent MLflow run in the experiment --experiment names, else one named after the sweep's `out`
(its last part: `sweep-comm` for runs/sweep-comm, so a sweep run again elsewhere with --out is an experiment of
its own unless told to join the first), and each run that
finished (completed, or ran to its budget) a child of it, logged by the sweep's own process from what the run
wrote, once it has ended: so it works whatever started the run. A child has config.json's settings as
parameters (config.json keeps no secret: a URL's credentials are redacted there), results.csv's figures as
metrics, the discovery curve as the history of the metric `discovery_curve` by step, and summary.json and
report.html as artifacts. Each child is tagged with its run's directory name, so a resumed sweep logs only
the runs not logged yet; the parent's id is kept in out/.sweep/mlflow.json, so the same `out` goes on under
the same parent while a new `out` (or another store) gets a new one.

The store is the one MLFLOW_TRACKING_URI names, as MLflow has it; without it, a SQLite database in the
sweep's `out` (mlflow.db), which needs no server: `mlflow ui --backend-store-uri sqlite:///<out>/mlflow.db`
shows it. A new experiment in a database store (that one, or a sqlite:, postgresql:, ... URI) keeps its
artifacts in out/mlartifacts/, never MLflow's default ./mlruns of whatever directory the user stands in; a
server or a file store keeps them in its own artifact root. MLflow's HTTP retries are bounded for the
sweep's process (HTTP_BOUNDS, where the user set none), so a store that does not answer is one line within
seconds, before any run; one that fails once the runs go on is one line, then no more tries: the sweep's
own files are written all the same, and at its end one line counts the runs MLflow is missing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from explorer.records.errors import ConfigError
from explorer.records.secrets import redact, redact_url
from explorer.records.summary import FINISHED
from explorer.records.trace import write_json
from explorer.report.run_report import REPORT
from explorer.sweep.compare import runs_text
from explorer.sweep.out_dir import STATE, read_json, run_summary
from explorer.sweep.results import run_metrics
from explorer.sweep.sweep_file import Sweep, SweepRun

# Before the import, which starts it: MLflow's usage telemetry would reach for the network; a sweep never does.
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunStatus
from mlflow.exceptions import MlflowException
from mlflow.store.db.db_types import DATABASE_ENGINES

logging.getLogger("mlflow").setLevel(logging.WARNING)  # its INFO lines (a new database's tables) are no sweep's

RECORD = "mlflow.json"  # in out/.sweep/: the parent run's id
DEFAULT_STORE, DEFAULT_ARTIFACTS = "mlflow.db", "mlartifacts"  # in `out`, without MLFLOW_TRACKING_URI
PARENT_TAG = "mlflow.parentRunId"  # MLflow's own: its UI nests a child under its parent
RUN_DIR_TAG = "explorer.run_dir"  # a child's run directory in `out`: what a resumed sweep looks up
CURVE = "discovery_curve"
ARTIFACTS = ("summary.json", REPORT)
MAX_PARAMS, MAX_METRICS = 100, 1000  # in one log_batch call, as MLflow allows
MAX_PARAM_CHARS = 6000  # MLflow's longest parameter value
# MLflow's documented settings, read at each request: its defaults (7 retries, 120 s each) take about 260 s to
# give up on a store that refuses; these about 3 s (a host that never answers: 3 tries of 5 s). The user's win.
HTTP_BOUNDS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",  # seconds, doubled at each retry (MLflow takes whole numbers)
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "5",  # seconds, each try
}
CREDENTIALS = re.compile(r"//[^/@\s]+@")  # a URL's user and password, in a message

T = TypeVar("T")


@contextlib.contextmanager
def mlflow_tracking(
    sweep: Sweep, experiment: str | None, say: Callable[[str], None]
) -> Iterator[Callable[[SweepRun], None]]:
    """The sweep's parent run in `experiment` (else the one named after `out`), opened (its runs finished
    already logged) and ended around the runs; gives what logs one run once it has ended. A store that cannot
    be opened, within MLflow's retries as HTTP_BOUNDS bound them, is a ConfigError before any run."""
    for name, value in HTTP_BOUNDS.items():  # for this process only; the user's own values win
        os.environ.setdefault(name, value)
    tracker = _Tracker(sweep, experiment or sweep.directory.resolve().name, say)
    for run in sweep.runs:
        tracker.log(run)
    try:
        yield tracker.log
    finally:
        tracker.end()


class _Tracker:
    """The parent run of a sweep in an MLflow store, and the names of the runs logged under it."""

    def __init__(self, sweep: Sweep, experiment: str, say: Callable[[str], None]) -> None:
        self.sweep, self.say = sweep, say
        self.failed: str | None = None  # why the store failed once the runs went on: no run is tried after
        self.missed: list[str] = []  # the finished runs not logged since
        uri = os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{(sweep.directory / DEFAULT_STORE).resolve()}"
        if urlsplit(uri).scheme in ("http", "https"):
            say(f"MLflow: checking the store {redact_url(uri)} ({_http_bounds()})")
        try:
            self.client = MlflowClient(tracking_uri=uri)
            self.experiment = self._experiment(experiment, artifacts=_is_database(uri))
            self.parent = self._parent(sweep.text)
            self.logged = self._logged()
        except (MlflowException, OSError, ImportError) as error:  # ImportError: a SQLite store without SQLAlchemy
            raise ConfigError(f"--track mlflow: cannot use the store {redact_url(uri)}: {_line(error)}") from None
        say(f"MLflow: the sweep is run {self.parent} of the experiment {experiment!r} in {redact_url(uri)}")

    def _experiment(self, name: str, artifacts: bool) -> str:
        """The experiment's id, made if need be; in a database store, with its artifacts in `out` (an experiment
        there already keeps its own: MLflow fixes them when it makes one)."""
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return str(found.experiment_id)
        location = (self.sweep.directory / DEFAULT_ARTIFACTS).resolve().as_uri() if artifacts else None
        return str(self.client.create_experiment(name, artifact_location=location))

    def _parent(self, sweep_text: str) -> str:
        """The sweep's parent run, running again: the one out/.sweep/mlflow.json names where the store has it,
        else a new one (with the sweep file, its secret URLs redacted), which the record then names."""
        record = self.sweep.directory / STATE / RECORD
        recorded = (read_json(record) or {}).get("parent_run_id")
        if recorded and self._active(str(recorded)):
            self.client.update_run(str(recorded), status=RunStatus.to_string(RunStatus.RUNNING))
            return str(recorded)
        parent = self.client.create_run(self.experiment, run_name=self.sweep.directory.name).info.run_id
        self.client.log_text(parent, sweep_text, "sweep.yaml")
        write_json(record, {"parent_run_id": parent})
        return str(parent)

    def _active(self, run_id: str) -> bool:
        try:
            run = self.client.get_run(run_id)
        except MlflowException:  # another store, or a run removed from it
            return False
        return run.info.lifecycle_stage == "active" and run.info.experiment_id == self.experiment

    def _logged(self) -> set[str]:
        """The run directories logged under the parent; a child the sweep was stopped while logging is removed,
        to be logged again whole."""
        logged, token = set(), None
        while True:
            page = self.client.search_runs(
                [self.experiment], f"tags.`{PARENT_TAG}` = '{self.parent}'", max_results=1000, page_token=token
            )
            for child in page:
                if child.info.status == RunStatus.to_string(RunStatus.FINISHED):
                    logged.add(child.data.tags.get(RUN_DIR_TAG, ""))
                else:
                    self.client.delete_run(child.info.run_id)
            token = page.token
            if not token:
                return logged

    def log(self, run: SweepRun) -> None:
        """Log `run` as a child, once, if it finished. A store that fails is one line, and not tried again: each
        try would hold the sweep up to its retries' end; the next resume logs what it missed."""
        run_dir = self.sweep.directory / run.name
        summary = run_summary(run_dir)
        if run.name in self.logged or summary.get("status") not in FINISHED:
            return
        if self.failed is not None:
            self.missed.append(run.name)
            return
        try:
            self._log(run, run_dir, summary)
        except (MlflowException, OSError) as error:
            self.failed = _line(error)
            self.missed.append(run.name)
            self.say(
                f"MLflow: the store failed logging {run.name} ({self.failed}); the sweep goes on, and logs no "
                "more runs to MLflow"
            )
            return
        self.logged.add(run.name)

    def _log(self, run: SweepRun, run_dir: Path, summary: dict[str, Any]) -> None:
        tags = {PARENT_TAG: self.parent, RUN_DIR_TAG: run.name, "explorer.condition": run.condition}
        child = self.client.create_run(self.experiment, run_name=run.name, tags=tags).info.run_id
        params = _params(read_json(run_dir / "config.json") or {})
        metrics = _metrics(summary)
        for some_params in _batches(params, MAX_PARAMS):
            self.client.log_batch(child, params=some_params)
        for some_metrics in _batches(metrics, MAX_METRICS):
            self.client.log_batch(child, metrics=some_metrics)
        for name in ARTIFACTS:
            if (run_dir / name).is_file():
                self.client.log_artifact(child, str(run_dir / name))
        self.client.set_terminated(child)  # last: a child not FINISHED is one the sweep stopped while logging

    def end(self) -> None:
        """The parent ends FINISHED when every run is logged, else FAILED (the same command again resumes it);
        after the store failed, the gap is said instead, and the parent left as it is."""
        if self.failed is not None:
            self.say(
                f"MLflow: {runs_text(len(self.missed))} finished but not logged, the store having failed "
                f"({self.failed}); the same command again, once the store is back, logs them"
            )
            return
        done = all(run.name in self.logged for run in self.sweep.runs)
        try:
            self.client.set_terminated(self.parent, "FINISHED" if done else "FAILED")
        except MlflowException as error:
            self.say(f"MLflow: the sweep's run was not ended ({_line(error)})")


def _http_bounds() -> str:
    """The bounds MLflow's requests go under, as set for this process, and where to change them."""
    retries, factor, timeout = (os.environ[name] for name in HTTP_BOUNDS)
    return (
        f"at most {retries} retries, {factor} s apart and doubling, {timeout} s a try: "
        f"{', '.join(HTTP_BOUNDS)} change it"
    )


def _is_database(uri: str) -> bool:
    """Whether `uri` is a database store (sqlite:, postgresql+psycopg2:, ...), which has no artifact root of
    its own: MLflow would put a new experiment's artifacts in ./mlruns, wherever the sweep was started."""
    return urlsplit(uri).scheme.partition("+")[0] in DATABASE_ENGINES


def _params(settings: dict[str, Any]) -> list[Param]:
    """The run's settings as config.json records them, each value as text (JSON but for text itself); redacted
    again for any key from the environment, and cut to the length MLflow takes."""
    texts = {name: value if isinstance(value, str) else json.dumps(value) for name, value in settings.items()}
    return [Param(name, redact(text)[:MAX_PARAM_CHARS]) for name, text in texts.items()]


def _metrics(summary: dict[str, Any]) -> list[Metric]:
    """results.csv's figures of the run (those it has), at step 0, then its discovery curve by step."""
    now = int(time.time() * 1000)
    figures = [
        Metric(name, float(value), now, 0)
        for name, value in run_metrics(summary).items()
        if isinstance(value, (int, float))  # a bool too: all_found as 1 or 0
    ]
    curve = [Metric(CURVE, float(found), now, int(step)) for step, found in summary.get(CURVE) or ()]
    return figures + curve


def _batches(items: Sequence[T], size: int) -> list[Sequence[T]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def _line(error: BaseException) -> str:
    """An error's first line, with any credentials of a URL in it hidden (MLflow's name the store's URL whole,
    user and password too): its messages can be long."""
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return redact(CREDENTIALS.sub("//***@", line))
