"""What a run tells a tracing backend as it goes (--telemetry): nothing, or OpenTelemetry spans over OTLP.

The run hands the `Telemetry` each step line as the step commit writes it, each pass the embedding service
encodes, and its end. With --telemetry none (the default) that is `NoTelemetry`, whose methods do nothing, and
no OpenTelemetry module is imported; with otlp, explorer/records/otel_spans.py makes the spans
(docs/telemetry.md), started by explorer/run/run_records.py. Whatever the collector does, the run's own files are
written as always.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

NO_TELEMETRY = "none"
OTLP = "otlp"
TELEMETRY_KINDS = (NO_TELEMETRY, OTLP)
# What the `telemetry` extra installs, looked for (not imported) when the run's options are checked.
OTLP_PACKAGES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


class Telemetry(Protocol):
    """Where a run's steps go besides its own files, as they are committed."""

    def step(self, line: Mapping[str, Any], laps_ended: float) -> None:
        """A committed step's trace line (bounded as trace.jsonl keeps it); `laps_ended`: when its last node
        ended (perf_counter), which with the line's timings places each node."""
        ...

    def embedded(self, texts: int, started: float, ended: float) -> None:
        """The embedding service encoded `texts` texts in one pass, from `started` to `ended` (perf_counter)."""
        ...

    def close(self, status: str) -> None:
        """The run ended with `status`: what is still queued is sent, within a bound, and nothing after."""
        ...


class NoTelemetry:
    """--telemetry none: nothing is made, nothing sent."""

    def step(self, line: Mapping[str, Any], laps_ended: float) -> None:
        pass

    def embedded(self, texts: int, started: float, ended: float) -> None:
        pass

    def close(self, status: str) -> None:
        pass


@dataclass(frozen=True)
class TelemetrySetup:
    """What the spans of a run say of it, given by the run (explorer/run/run_records.py)."""

    kind: str  # one of TELEMETRY_KINDS
    run_name: str  # the run directory's name: the spans' conversation id
    options: Mapping[str, Any]  # the run's options as config.json records them (URLs redacted)
    local: frozenset[str]  # the members this process runs: only their steps are its spans
    log: logging.Logger  # the run's: a warning, once, where the collector does not take the spans
    # A team split across processes: given the trace context this process would start the team's trace with
    # (a W3C traceparent), the one the team shares, the first process's (explorer/team/redis_store.py).
    team_trace: Callable[[str], str] | None = None


def telemetry_unavailable(kind: str) -> str | None:
    """Why --telemetry `kind` cannot run here, in one line; None when it can."""
    if kind == NO_TELEMETRY or all(_installed(package) for package in OTLP_PACKAGES):
        return None
    return (
        f"--telemetry {kind} needs the OpenTelemetry SDK and its OTLP exporter: "
        "pip install 'multi-agent-explorer[telemetry]' (or pip install -e '.[telemetry]' in a checkout)"
    )


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:  # its parent package is not there either
        return False
