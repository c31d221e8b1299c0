"""The run's log: run.log in the run directory, and the console, for the "explorer" logger only."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from explorer.records.run_view import RunView, plain

log = logging.getLogger("explorer")  # not the root logger: libraries' debug output stays out


class RunLogHandler(logging.FileHandler):
    """run.log, which a full disk must not turn into an error of its own, and which `cat` must not
    turn into a terminal's commands: its lines are cleaned as the console's are."""

    def format(self, record: logging.LogRecord) -> str:
        """The line without control or escape codes: world names and model replies are logged as given."""
        return plain(super().format(record))

    def handleError(self, record: logging.LogRecord) -> None:
        """A log line the disk has no room for is lost quietly: the console and the error say what happened."""

    def close(self) -> None:
        with contextlib.suppress(OSError):  # its last lines did not fit on the disk: lost quietly, as above
            super().close()


def start_logging(run_dir: Path, view: RunView) -> list[logging.Handler]:
    """Log to <run_dir>/run.log (every line) and to the view (at its verbosity); the handlers added."""
    log.setLevel(logging.DEBUG)
    file_handler = RunLogHandler(run_dir / "run.log", encoding="utf-8")
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s [%(threadName)s] %(message)s"))
    console_handler = view.log_handler()
    log.addHandler(file_handler)
    log.addHandler(console_handler)
    return [file_handler, console_handler]


def stop_logging(handlers: list[logging.Handler]) -> None:
    for handler in handlers:
        log.removeHandler(handler)
        handler.close()
