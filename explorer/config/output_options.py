"""The output's options: where the run is written, what the console shows, and where spans go."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from explorer.config.options import OneOf, option
from explorer.records.errors import ConfigError
from explorer.records.telemetry import NO_TELEMETRY, TELEMETRY_KINDS, telemetry_unavailable


@dataclass(frozen=True)
class OutputOptions:
    """The run's directory, the console's verbosity and the telemetry."""

    run_dir: Path | None = field(
        default=None,
        metadata=option(
            "--run-dir",
            "where to write the run (default runs/<timestamp>/ here)",
            type=Path,
            record=None,
        ),
    )
    telemetry: str = field(
        default=NO_TELEMETRY,
        metadata=option(
            "--telemetry",
            "otlp: send OpenTelemetry spans of the run (GenAI conventions) to the collector that "
            "OTEL_EXPORTER_OTLP_ENDPOINT names (default http://localhost:4318; the telemetry extra); "
            "none (default): send nothing (docs/telemetry.md)",
            check=OneOf(TELEMETRY_KINDS, in_parser=True),
        ),
    )
    verbosity: int = 0  # -1 quiet, 0 normal, 1 verbose: the command line's -q and -v

    def check(self) -> None:
        """A given run directory holds no run yet (explorer/run/run_dir.py claims it, atomically, once every
        check has passed, and says what is wrong with a path that cannot be one); telemetry can be sent."""
        if self.run_dir is not None and _holds_files(self.run_dir):
            raise ConfigError(f"run directory {self.run_dir} is not empty; choose another --run-dir")
        unavailable = telemetry_unavailable(self.telemetry)
        if unavailable:
            raise ConfigError(unavailable)


def _holds_files(folder: Path) -> bool:
    try:
        return folder.is_dir() and any(folder.iterdir())
    except OSError:
        return False  # unreadable: the claim says why
