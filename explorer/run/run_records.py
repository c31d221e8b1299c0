"""What a run keeps of itself: what it shows, run.log, trace.jsonl and the counts as it goes; the summary and
the report at its end."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from explorer.config.run_config import RunConfig
from explorer.records.logs import start_logging, stop_logging
from explorer.records.run_lock import RunLock, hold_run_dir
from explorer.records.run_view import RunShown, RunView, RunViewFactory
from explorer.records.summary import RunStats, SummarySettings
from explorer.records.telemetry import NO_TELEMETRY, NoTelemetry, Telemetry, TelemetrySetup
from explorer.records.trace import DiskWriteError, TraceWriter, write_json
from explorer.report.run_report import write_report
from explorer.run.roster import Roster
from explorer.run.shared_world import SharedWorld
from explorer.schedule.commit import StepCommit

log = logging.getLogger("explorer")


@dataclass(frozen=True)
class RunRecords:
    """The run's records, written by the step commit as each step is committed; the run directory, in use
    (locked) until they are closed."""

    lock: RunLock
    view: RunView
    logs: list[logging.Handler]
    trace: TraceWriter
    commit: StepCommit
    telemetry: Telemetry  # --telemetry: the same steps as spans

    @property
    def stats(self) -> RunStats:
        return self.commit.stats

    def write(self, summary: dict, run_dir: Path) -> None:
        """summary.json, then report.html; raises DiskWriteError where the summary does not fit on the disk."""
        write_json(run_dir / "summary.json", summary)
        _write_report(run_dir)

    def close(self, summary: dict, run_dir: Path, status: str) -> None:
        """The summary shown, run.log's closing line written, the spans' last sent (within a bound), the log
        closed, and the run directory let go."""
        self.view.print_summary(summary, run_dir)
        self.telemetry.close(status)
        log.debug(  # run.log's closing line; the console has just shown the summary
            "Run %s after %d agent-steps: %d of %s objects found",
            status,
            sum(summary["steps"].values()),
            len(summary["objects_discovered"]),
            summary["total_objects"] if summary["total_objects"] is not None else "unknown",
        )
        stop_logging(self.logs)
        self.lock.release()


def start_records(
    config: RunConfig,
    roster: Roster,
    steps: int,
    world: SharedWorld,
    run_dir: Path,
    process_started: float,
    view_of: RunViewFactory,
) -> RunRecords:
    """`run_dir` locked, the view `view_of` makes, run.log and trace.jsonl opened in it, and the commit that
    fills them; raises DiskWriteError."""
    try:
        lock = hold_run_dir(run_dir)  # before the trace is there: a reader that finds it finds the run in use
    except OSError as error:
        raise DiskWriteError(f"cannot lock the run directory {run_dir}: {error.strerror or error}") from None
    size = world.environment.size  # a mock world always has one
    world_size = size[:2] if config.episode.mode == "mock" and size is not None else None
    total = world.environment.total_objects
    view = view_of(RunShown(list(roster.members), steps, total, config.output.verbosity, world_size, world.mock_world))
    logs = start_logging(run_dir, view)
    trace = TraceWriter(run_dir / "trace.jsonl")
    directors = [member for member in roster.members if member not in roster.agent_ids]
    stats = RunStats(list(roster.members), directors[0] if directors else None, directors)
    telemetry = start_telemetry(config, roster, steps, run_dir, world)
    commit = StepCommit(world.store, trace, stats, view, roster.coordinator_id, process_started, telemetry)
    return RunRecords(lock, view, logs, trace, commit, telemetry)


def start_telemetry(config: RunConfig, roster: Roster, steps: int, run_dir: Path, world: SharedWorld) -> Telemetry:
    """The run's telemetry (--telemetry), told of each pass the embedding service encodes: with otlp, the
    root span started (nothing is sent before the first batch of spans is ready)."""
    if config.output.telemetry == NO_TELEMETRY:
        telemetry: Telemetry = NoTelemetry()
    else:
        from explorer.records.otel_spans import OtlpTelemetry  # only here: a run without it imports none of it

        telemetry = OtlpTelemetry(
            TelemetrySetup(
                kind=config.output.telemetry,
                run_name=run_dir.name,
                options={**config.to_dict(), "steps": steps},
                local=frozenset(roster.local),
                log=log,
                team_trace=world.team.run.team_trace if world.team else None,
            )
        )
    if world.embedder:
        world.embedder.on_batch = telemetry.embedded  # a later run given the same embedder sets its own
    return telemetry


def summary_settings(config: RunConfig) -> SummarySettings:
    """What the summary records of the run's options: named here, a floor above records/, where RunConfig is."""
    return SummarySettings(
        mode=config.episode.mode,
        world=config.episode.world,
        seed=config.episode.seed,
        random_starts=config.episode.random_starts,
        stop_when=config.episode.stop_when,
        model=config.calls.model,
        comm=config.team.topology.messages,
        decide=config.calls.decide,
        fallback=config.calls.fallback,
        schedule=config.timing.schedule,
        wall_clock=config.timing.schedule_kind.wall_clock,
        embedder=config.memory.embedder,
        max_cost=config.calls.max_cost,
        max_calls=config.calls.max_calls,
        max_tokens=config.calls.max_tokens,
        store=config.team.store,
        run_id=config.team.run_id,
    )


def _write_report(run_dir: Path) -> None:
    """report.html from the run's files; a report that cannot be made is logged, and the run is not lost for it."""
    try:
        write_report(run_dir)
    except OSError as error:
        log.error("report.html was not written: %s", error)
    except Exception as error:  # a bug in the report must not cost the run its ending
        log.error("report.html was not written: %r", error)
        log.debug("report traceback", exc_info=True)
