"""The live page's web server (`--serve`): the only module that imports aiohttp.

It runs in a thread of its own, on its own event loop, so the agents never wait for it. The run wakes it
(`wake`, from any thread, never blocking); it then asks its `source` for the run's latest state, at most
every REFRESH_SECONDS and BUSY_SHARE of the time, and sends it to each page as a server-sent event. A
page that reads slowly is sent the latest state when it is ready again, never a queue of the states it
missed. It answers GET only: the page, its events, plotly's script and, once the run has written it,
report.html."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from explorer.records.errors import ConfigError

log = logging.getLogger("explorer")
PLOTLY_PATH = "/plotly.min.js"  # the page loads plotly's script from here
REFRESH_SECONDS = 0.5  # the page is redrawn at most this often: the map is a few hundred kilobytes at most
BUSY_SHARE = 0.2  # and the server's thread makes the page's state at most this share of the time
CLOSE_SECONDS = 2.0  # how long closing waits for the pages' connections to end


def bind(host: str, port: int) -> socket.socket:
    """A listening socket at host:port (port 0: a free one); ConfigError, in one line, where it cannot be."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as error:  # a host that does not resolve, a port in use or not ours to take
        # The system's words for it (create_server adds the address, which the message gives already).
        reason = os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror or str(error)
        raise ConfigError(f"--serve {host}:{port}: {reason}") from None


class LiveServer:
    """The page at `url` from the moment it is made, until `close`."""

    def __init__(self, listening: socket.socket, page: str, plotly: str) -> None:
        self.page, self.plotly = page, plotly
        host, port = listening.getsockname()[:2]
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
        self.source: Callable[[], str] = lambda: "null"  # the latest state's JSON; called on the server's thread
        self.report: Path | None = None  # report.html, served once the run has written it
        self._latest, self._version, self._closing = "null", 0, False
        self._wake_pending = False  # a wake is on its way to the loop: one is enough, however many steps
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._failure: Exception | None = None  # why the server could not start
        self._thread = threading.Thread(target=self._serve, args=(listening,), name="live-page", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._failure is not None:
            raise ConfigError(f"--serve {self.url}: the server did not start: {self._failure!r}")

    def wake(self) -> None:
        """The run has news: the page is sent the latest state soon. Any thread; never blocks."""
        if self._wake_pending:
            return
        self._wake_pending = True
        with contextlib.suppress(RuntimeError):  # the server has closed
            self._loop.call_soon_threadsafe(self._woken.set)

    def close(self) -> None:
        """Stop serving: the pages' connections end, the thread ends."""
        try:
            self._loop.call_soon_threadsafe(self._stop.set)
        except RuntimeError:
            return
        self._thread.join(CLOSE_SECONDS + 5)

    def _serve(self, listening: socket.socket) -> None:
        asyncio.set_event_loop(self._loop)
        self._woken, self._stop, self._changed = asyncio.Event(), asyncio.Event(), asyncio.Condition()
        try:
            self._loop.run_until_complete(self._run(listening))
        except Exception as error:  # it never started (the constructor says so), or stopped of itself
            if self._started.is_set():
                log.error("the live page stopped: %r", error)
            self._failure = error
        finally:
            self._started.set()
        self._loop.close()

    async def _run(self, listening: socket.socket) -> None:
        app = web.Application()
        app.router.add_get("/", self._page)
        app.router.add_get("/events", self._events)
        app.router.add_get(PLOTLY_PATH, self._plotly)
        app.router.add_get("/report.html", self._report)
        app.router.add_get("/favicon.ico", self._no_icon)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.SockSite(runner, listening, shutdown_timeout=CLOSE_SECONDS).start()
        self._started.set()
        pump = asyncio.ensure_future(self._pump())
        await self._stop.wait()
        pump.cancel()
        async with self._changed:  # the pages' event streams end
            self._closing = True
            self._changed.notify_all()
        await runner.cleanup()

    async def _pump(self) -> None:
        """Each wake: the latest state, made once for every page; then a pause, so a busy run is not slowed."""
        while True:
            await self._woken.wait()
            self._woken.clear()
            self._wake_pending = False
            began = time.thread_time()  # its own work: not the time it waits for the agents' threads
            try:
                latest = self.source()
            except Exception as error:  # a bug in the page must not cost the run anything
                log.error("the live page could not be updated: %r", error)
            else:
                async with self._changed:
                    self._latest, self._version = latest, self._version + 1
                    self._changed.notify_all()
            # A large world's state takes a while to make: the thread then rests longer, so the agents keep the cores.
            await asyncio.sleep(max(REFRESH_SECONDS, (time.thread_time() - began) * (1 / BUSY_SHARE - 1)))

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(text=self.page, content_type="text/html")

    async def _plotly(self, request: web.Request) -> web.Response:
        return web.Response(text=self.plotly, content_type="text/javascript")

    async def _no_icon(self, request: web.Request) -> web.Response:
        return web.Response(status=204)  # none: a browser asks, and a 404 would be an error in its console

    async def _report(self, request: web.Request) -> web.StreamResponse:
        if self.report is None or not self.report.is_file():
            raise web.HTTPNotFound(text="report.html is written when the run ends")
        return web.FileResponse(self.report)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """The run's states as server-sent events: the latest at once, then each newer one the page can take."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        sent = -1  # the version sent last
        while True:
            latest = await self._newer_than(sent)
            if latest is None:
                return response
            sent, text = latest
            await response.write(f"data: {text}\n\n".encode())

    async def _newer_than(self, version: int) -> tuple[int, str] | None:
        """The state once there is one newer than `version`, with its version; None once the server closes."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._version != version or self._closing)
            return None if self._closing else (self._version, self._latest)
