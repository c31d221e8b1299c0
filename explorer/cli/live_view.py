"""`--serve [HOST:]PORT`: the run shown on a live web page as well as in the console.

The run hands each committed step to a `StepChannel` (bounded, thread-safe, never waiting) and wakes the
server (explorer/cli/web_server.py), whose thread folds the steps into the page's state
(explorer/report/live.py) and sends it to the pages. When the run ends the page says so and links the
run's report.html, which the server then serves too; it keeps serving until Ctrl-C.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from explorer.cli.page_access import (
    announcement,
    browser_host,
    client_cap,
    files_limit,
    open_files,
    page_access,
    page_url,
)
from explorer.records.run_view import RunShown, RunView, RunViewFactory
from explorer.report.charts import plotly_script
from explorer.report.live import LiveTeam
from explorer.report.page import render
from explorer.run.signals import STOP_SIGNALS

if TYPE_CHECKING:  # the server (aiohttp) is imported only for a run with --serve: a run without starts sooner
    from explorer.cli.web_server import LiveServer

CHANNEL_BATCHES = 1000  # commits waiting for the server's thread; past it the oldest are dropped, and counted


class StepChannel:
    """The committed steps on their way from the run to the page: at most `capacity` commits wait; past that
    the oldest are dropped and their lines counted, so memory stays bounded however far the reader falls
    behind. `put` never waits for the reader."""

    def __init__(self, capacity: int = CHANNEL_BATCHES) -> None:
        self._batches: deque[list[dict[str, Any]]] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self.dropped = 0

    def put(self, lines: list[dict[str, Any]]) -> None:
        with self._lock:
            if len(self._batches) == self._batches.maxlen:
                self.dropped += len(self._batches[0])
            self._batches.append(lines)

    def take(self) -> list[list[dict[str, Any]]]:
        """Every commit waiting, oldest first; the channel is then empty."""
        with self._lock:
            batches = list(self._batches)
            self._batches.clear()
            return batches


class LiveView:
    """The console's view, and the live page's: each committed step goes to both."""

    def __init__(self, console: RunView, server: LiveServer, shown: RunShown) -> None:
        self.console, self.server = console, server
        self.channel = StepChannel()
        self.team = LiveTeam(shown.members, shown.mock_world)
        self.ending: tuple[str, Path] | None = None  # the run's status and directory, once it has ended
        server.source = self._state

    def __enter__(self) -> LiveView:
        self.console.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.console.__exit__(kind, error, traceback)

    def log_handler(self) -> logging.Handler:
        return self.console.log_handler()

    def step_committed(self, lines: list[dict[str, Any]], team_found: list[str], round_complete: bool) -> None:
        self.console.step_committed(lines, team_found, round_complete)
        self.channel.put(lines)
        self.server.wake()

    def print_summary(self, summary: dict[str, Any], run_dir: Path) -> None:
        self.console.print_summary(summary, run_dir)
        self.server.report = run_dir / "report.html"
        self.ending = (summary["status"], run_dir)
        self.server.wake()

    def _state(self) -> str:
        """The page's latest state, with every commit waiting folded in (on the server's thread)."""
        for lines in self.channel.take():
            for line in lines:
                self.team.add(line)
        self.team.dropped = self.channel.dropped
        if self.ending and self.team.ending is None:
            status, run_dir = self.ending
            self.team.end(status, (run_dir / "report.html").is_file())
        return self.team.snapshot()


class LivePage:
    """`--serve`'s page, served while the block runs (`with LivePage(address) as page:`); none without an
    address. Made before the run, so that a host or port it cannot have stops the command before the run starts."""

    def __init__(self, address: tuple[str, int] | None) -> None:
        self.address = address
        self.server: LiveServer | None = None
        self.url = ""  # the page's address, without its token

    def __enter__(self) -> LivePage:
        if self.address is not None:
            from explorer.cli.web_server import PLOTLY_PATH, ClientBounds, LiveServer, bind

            host, port = self.address
            limit, open_now = files_limit(), open_files()  # before the socket: the cap counts each client's
            listening = bind(host, port)  # ConfigError where it cannot be had
            bound = listening.getsockname()[0]
            access = page_access(host, bound)
            page = render("live.html.j2", f'<script src="{PLOTLY_PATH}"></script>')
            bounds = ClientBounds(clients=client_cap(limit, open_now))
            self.server = LiveServer(listening, page, plotly_script(), access, bounds)
            self.url = page_url(browser_host(bound), self.server.port)
            for line in announcement(self.url, access, bound, bounds.clients, limit):
                print(line, flush=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.close()

    def views(self, console: RunViewFactory) -> RunViewFactory:
        """The run's views: the console's, and the page's beside it where there is one."""
        server = self.server
        if server is None:
            return console
        return lambda shown: LiveView(console(shown), server, shown)

    def serve_on(self, interrupted: bool) -> None:
        """The run is over: unless it was interrupted, the page and the report stay served until Ctrl-C
        (or SIGTERM, SIGHUP); the run's exit code stands."""
        if self.server is None or interrupted:
            return
        stopped = threading.Event()
        for signum in STOP_SIGNALS:
            signal.signal(signum, lambda *_: stopped.set())
        print(f"The live page and the report stay at {self.url} until Ctrl-C.", flush=True)
        while not stopped.wait(1.0):
            pass
