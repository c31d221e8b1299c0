"""What a run shows as it goes: the seam the command line's live console (explorer/cli/console.py) implements.

The run reports each committed step, its log and its summary to a `RunView`; it never imports the
console, so that a run from Python, a bench or an environment can watch it as it likes.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from perception.world import World

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def plain(text: object) -> str:
    """`text` safe to show: no control or escape codes (names come from files, models and paths)."""
    return _CONTROL.sub("", str(text))


@dataclass(frozen=True)
class RunShown:
    """What a view is made with: the team, its step budget, the world's objects, how much to say
    (-1 quiet, 0, 1 verbose), the world's width and depth where a map can be drawn and the world itself
    (mock mode)."""

    members: list[str]
    steps: int
    total_objects: int | None
    verbosity: int
    world_size: tuple[int, int] | None
    mock_world: World | None = None


class RunView(Protocol):
    """Shown while the agents run (`with view:`), told of each committed step, and shown the summary."""

    def __enter__(self) -> RunView: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None: ...

    def log_handler(self) -> logging.Handler:
        """Where the run's log lines go besides run.log, at the view's verbosity."""
        ...

    def step_committed(self, lines: list[dict[str, Any]], team_found: list[str], round_complete: bool) -> None:
        """The trace lines just committed, what the team has found, and whether a whole step is done."""
        ...

    def print_summary(self, summary: dict[str, Any], run_dir: Path) -> None: ...


RunViewFactory = Callable[[RunShown], RunView]


class _PlainHandler(logging.StreamHandler):
    def format(self, record: logging.LogRecord) -> str:
        return plain(super().format(record))


class QuietView:
    """A run watched by no one: warnings and errors go to stderr, nothing else is shown."""

    def __init__(self, shown: RunShown) -> None:
        self.shown = shown

    def __enter__(self) -> QuietView:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        return None

    def log_handler(self) -> logging.Handler:
        handler = _PlainHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        return handler

    def step_committed(self, lines: list[dict[str, Any]], team_found: list[str], round_complete: bool) -> None:
        return None

    def print_summary(self, summary: dict[str, Any], run_dir: Path) -> None:
        return None
