"""The live page's web server (`--serve`): the only module that imports aiohttp.

It runs in a thread of its own, on its own event loop, so the agents never wait for it. The run wakes it
(`wake`, from any thread, never blocking); it then asks its `source` for the run's latest state, at most
every REFRESH_SECONDS and BUSY_SHARE of the time, and sends it to each page as a server-sent event. It
answers GET only: the page, its events, plotly's script and, once the run has written it, report.html.

It is a guest in the run's process: whatever its clients do, the run keeps its descriptors and memory.
At most `ClientBounds.clients` connections at once (the rest get 503 at once, and the cap leaves the run
its descriptors: explorer/cli/page_access.py); each client is sent its bodies in SEND_CHUNK pieces, the
next once it has taken the one before, so that what waits for it is at most QUEUE_BYTES besides the state
it is being sent, which every client shares; a client that takes nothing for `read_seconds`, or sends no
request for `request_seconds`, is closed. A page that reads slowly is sent the latest state when it is
ready again, never a queue of the states it missed. Only the `Host` names of `PageAccess` are answered,
and its token asked for where it has one. A client that leaves mid-write is one debug line in run.log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from explorer.cli.page_access import ACCEPT_BURST, MAX_CLIENTS, PageAccess
from explorer.records.errors import ConfigError

log = logging.getLogger("explorer")
PLOTLY_PATH = "/plotly.min.js"  # the page loads plotly's script from here
REFRESH_SECONDS = 0.5  # the page is redrawn at most this often: the map is a few hundred kilobytes at most
BUSY_SHARE = 0.2  # and the server's thread makes the page's state at most this share of the time
CLOSE_SECONDS = 2.0  # how long closing waits for the pages' connections to end
SEND_CHUNK = 64 * 1024  # a body goes to a client in pieces this size, each once it has room
# What waits for a client at most: up to a piece in its socket's buffer, the next, and their HTTP framing.
QUEUE_BYTES = 2 * SEND_CHUNK + 64
READ_SECONDS = 20.0  # a client that takes nothing of what it is sent for this long is closed
REQUEST_SECONDS = 10.0  # a connection that sends no request for this long is closed
KEEPALIVE_SECONDS = 10.0  # a connection idle between requests for this long is closed
LISTEN_BACKLOG = 128  # connections the kernel holds until they are accepted (or refused)
REFUSED_LINGER_SECONDS = 1.0  # a refused connection waits this long at most for its client to close
TOKEN_GIVEN = "token given"  # a request's mark: its token came in the query or a header (the page sets a cookie)
FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 10\r\n"
    b"Connection: close\r\nContent-Length: 56\r\n\r\nThe live page has as many clients as it takes: try later\n"
)


@dataclass(frozen=True)
class ClientBounds:
    """How many clients at once, and how long each may keep the server waiting."""

    clients: int = MAX_CLIENTS
    read_seconds: float = READ_SECONDS
    request_seconds: float = REQUEST_SECONDS


class ClientGone(ConnectionError):
    """A client closed for taking nothing of what it was sent within its deadline."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket at host:port (port 0: a free one); ConfigError, in one line, where it cannot be."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
    except OSError as error:  # a host that does not resolve, a port in use or not ours to take
        # The system's words for it (create_server adds the address, which the message gives already).
        reason = os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror or str(error)
        raise ConfigError(f"--serve {host}:{port}: {reason}") from None


class OneDebugLine(logging.LoggerAdapter):
    """aiohttp's own log lines (a client gone mid-write, a request it could not read): one debug line
    each in run.log, never a traceback, nothing in the console."""

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        error = kwargs.get("exc_info")
        reason = f": {error!r}" if isinstance(error, BaseException) else ""
        self.logger.debug("the live page: %s%s", str(msg) % args if args else msg, reason)


class Guest(asyncio.Protocol):
    """One client's connection: aiohttp's handler speaks HTTP on it; this counts it, closes it when no
    request comes in time, and knows when its socket's buffer has room for the next piece."""

    def __init__(self, handler: asyncio.Protocol, server: LiveServer) -> None:
        self.handler, self.server = handler, server
        self.transport: asyncio.Transport | None = None
        self.asked = False  # a request has come
        self.room = asyncio.Event()
        self._no_request: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(high=SEND_CHUNK)
        self.room.set()
        self.server.guests[transport] = self
        wait = self.server.bounds.request_seconds
        self._no_request = asyncio.get_running_loop().call_later(wait, self._unasked)
        self.handler.connection_made(transport)

    def _unasked(self) -> None:
        if not self.asked and self.transport is not None:
            log.debug("the live page: a client sent no request in %g s", self.server.bounds.request_seconds)
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        self.handler.data_received(data)

    def eof_received(self) -> bool | None:
        return self.handler.eof_received()

    def pause_writing(self) -> None:
        self.room.clear()
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.room.set()
        self.handler.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._no_request is not None:
            self._no_request.cancel()
        self.room.set()  # a write waiting for room fails at once, instead of at its deadline
        if self.transport is not None:
            self.server.guests.pop(self.transport, None)
        self.server.clients -= 1
        self.handler.connection_lost(exc)


class Refused(asyncio.Protocol):
    """A connection past the cap: 503 at once, then closed. It lingers a moment for the client's request
    (closing on it unread would reset the connection before the client reads the 503), unless
    ACCEPT_BURST refusals linger already."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.lingering = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(FULL)
        if self.server.refusing >= ACCEPT_BURST:
            transport.close()
            return
        self.lingering = True
        self.server.refusing += 1
        transport.write_eof()
        asyncio.get_running_loop().call_later(REFUSED_LINGER_SECONDS, transport.abort)

    def data_received(self, data: bytes) -> None:
        """The client's request, unread: its answer is sent already."""

    def eof_received(self) -> bool:
        return False  # the client has read its 503 and closed: so does the server

    def connection_lost(self, exc: Exception | None) -> None:
        if self.lingering:
            self.server.refusing -= 1


class LiveServer:
    """The page, served on `listening` from the moment it is made, until `close`."""

    def __init__(
        self,
        listening: socket.socket,
        page: str,
        plotly: str,
        access: PageAccess,
        bounds: ClientBounds = ClientBounds(),
    ) -> None:
        self.page, self.plotly = page.encode(), plotly.encode()
        self.access, self.bounds = access, bounds
        self.port: int = listening.getsockname()[1]
        self.source: Callable[[], str] = lambda: "null"  # the latest state's JSON; called on the server's thread
        self.report: Path | None = None  # report.html, served once the run has written it
        self.guests: dict[asyncio.BaseTransport, Guest] = {}  # the connections open, on the server's thread
        self.clients = 0  # connections admitted and not yet closed (counted before aiohttp has them)
        self.refusing = 0  # refused connections lingering for their clients to close
        self._refusing_said = False  # run.log has said the page is full since it last admitted a client
        self._latest, self._version, self._closing = b"data: null\n\n", 0, False
        self._wake_pending = False  # a wake is on its way to the loop: one is enough, however many steps
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(_one_debug_line)
        self._started = threading.Event()
        self._failure: Exception | None = None  # why the server could not start
        self._thread = threading.Thread(target=self._serve, args=(listening,), name="live-page", daemon=True)
        self._thread.start()
        self._started.wait()
        if self._failure is not None:
            raise ConfigError(f"--serve port {self.port}: the server did not start: {self._failure!r}")

    def wake(self) -> None:
        """The run has news: the page is sent the latest state soon. Any thread; never blocks."""
        if self._wake_pending:
            return
        self._wake_pending = True
        with contextlib.suppress(RuntimeError):  # the server has closed
            self._loop.call_soon_threadsafe(self._woken.set)

    def queues(self) -> list[int]:
        """What waits to be sent to each client now, in bytes (at most QUEUE_BYTES each). Any thread."""

        async def sizes() -> list[int]:
            return [guest.transport.get_write_buffer_size() for guest in self.guests.values() if guest.transport]

        return asyncio.run_coroutine_threadsafe(sizes(), self._loop).result(CLOSE_SECONDS + 5)

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
        runner = web.AppRunner(
            self._app(),
            access_log=None,
            logger=OneDebugLine(log),
            keepalive_timeout=KEEPALIVE_SECONDS,
            handler_cancellation=True,  # a client gone while its events wait for news: their handler ends
            shutdown_timeout=CLOSE_SECONDS,
        )
        await runner.setup()
        assert runner.server is not None
        # asyncio accepts up to `backlog` connections in one go, and listens with as long a queue: the queue is
        # then made longer again (connections waiting in it are the kernel's, not the run's descriptors).
        listener = await self._loop.create_server(self._admit(runner.server), sock=listening, backlog=ACCEPT_BURST)
        listening.listen(LISTEN_BACKLOG)
        self._started.set()
        pump = asyncio.ensure_future(self._pump())
        await self._stop.wait()
        pump.cancel()
        listener.close()
        async with self._changed:  # the pages' event streams end
            self._closing = True
            self._changed.notify_all()
        await runner.cleanup()

    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/", self._page)
        app.router.add_get("/events", self._events)
        app.router.add_get(PLOTLY_PATH, self._plotly)
        app.router.add_get("/report.html", self._report)
        app.router.add_get("/favicon.ico", self._no_icon)
        return app

    def _admit(self, http: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """The connections' protocol: aiohttp's, counted, while there is room for one more client."""

        def protocol() -> asyncio.Protocol:
            if self.clients >= self.bounds.clients:
                if not self._refusing_said:  # a flood is one line in run.log, not a line per connection
                    log.debug("the live page has %d clients: it refuses more until one leaves", self.clients)
                    self._refusing_said = True
                return Refused(self)
            self.clients += 1
            self._refusing_said = False
            return Guest(http(), self)

        return protocol

    @web.middleware
    async def _guard(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        """Only requests for the page's own Host names, with its token where it asks for one."""
        guest = self.guests.get(request.transport)  # type: ignore[arg-type]
        if guest is not None:
            guest.asked = True
        if not self.access.answers(request.headers.get("Host")):
            raise web.HTTPMisdirectedRequest(text="This is not the address the live page was given.\n")
        if self.access.token is not None:
            self._check_token(request)
        response: web.StreamResponse = await handler(request)
        return response

    def _check_token(self, request: web.Request) -> None:
        """The token from the query (?token=), an `Authorization: Bearer` header, or the cookie the page
        set; 401 without it."""
        bearer = request.headers.get("Authorization", "")
        given = [request.query.get("token"), bearer[7:] if bearer[:7].lower() == "bearer " else None]
        if any(self.access.admits(token) for token in given if token is not None):
            request[TOKEN_GIVEN] = True
        elif not self.access.admits(request.cookies.get(self.access.cookie(self.port))):
            raise web.HTTPUnauthorized(
                text="The live page asks for the token the run printed: ?token=TOKEN.\n",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def _remember_token(self, request: web.Request, response: web.StreamResponse) -> None:
        """A browser given the token in the address keeps it in a cookie: the page's own requests carry it."""
        if request.get(TOKEN_GIVEN) and self.access.token is not None:
            cookie = self.access.cookie(self.port)
            response.set_cookie(cookie, self.access.token, httponly=True, samesite="Strict", path="/")
            response.headers["Referrer-Policy"] = "no-referrer"

    async def _pump(self) -> None:
        """Each wake: the latest state, made once for every page; then a pause, so a busy run is not slowed."""
        while True:
            await self._woken.wait()
            self._woken.clear()
            self._wake_pending = False
            began = time.thread_time()  # its own work: not the time it waits for the agents' threads
            try:
                latest = f"data: {self.source()}\n\n".encode()  # one copy, which every client is sent
            except Exception as error:  # a bug in the page must not cost the run anything
                log.error("the live page could not be updated: %r", error)
            else:
                async with self._changed:
                    self._latest, self._version = latest, self._version + 1
                    self._changed.notify_all()
            # A large world's state takes a while to make: the thread then rests longer, so the agents keep the cores.
            await asyncio.sleep(max(REFRESH_SECONDS, (time.thread_time() - began) * (1 / BUSY_SHARE - 1)))

    async def _page(self, request: web.Request) -> web.StreamResponse:
        return await self._send(request, _response("text/html", len(self.page)), _once(self.page))

    async def _plotly(self, request: web.Request) -> web.StreamResponse:
        return await self._send(request, _response("text/javascript", len(self.plotly)), _once(self.plotly))

    async def _no_icon(self, request: web.Request) -> web.Response:
        return web.Response(status=204)  # none: a browser asks, and a 404 would be an error in its console

    async def _report(self, request: web.Request) -> web.StreamResponse:
        report = self.report
        if report is None or not report.is_file():
            raise web.HTTPNotFound(text="report.html is written when the run ends")
        return await self._send(request, _response("text/html", report.stat().st_size), _pieces(report))

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """The run's states as server-sent events: the latest at once, then each newer one the page can take."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        return await self._send(request, response, self._states())

    async def _states(self) -> AsyncIterator[bytes]:
        sent = -1  # the version sent last
        while (latest := await self._newer_than(sent)) is not None:
            sent, event = latest
            yield event

    async def _newer_than(self, version: int) -> tuple[int, bytes] | None:
        """The state once there is one newer than `version`, with its version; None once the server closes."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._version != version or self._closing)
            return None if self._closing else (self._version, self._latest)

    async def _send(
        self, request: web.Request, response: web.StreamResponse, bodies: AsyncIterator[bytes]
    ) -> web.StreamResponse:
        """`response` with each of `bodies`; a client that leaves, or takes nothing in time, is let go quietly."""
        guest = self.guests.get(request.transport)  # type: ignore[arg-type]
        self._remember_token(request, response)
        try:
            await response.prepare(request)
            if guest is None or request.method == "HEAD":  # gone already; or the headers only
                return response
            async for body in bodies:
                await self._pieces_to(guest, response, body)
        except ConnectionError as gone:  # ClientGone, or aiohttp's ClientConnectionResetError
            log.debug("the live page: a client left: %r", gone)
        return response

    async def _pieces_to(self, guest: Guest, response: web.StreamResponse, body: bytes) -> None:
        """`body` in SEND_CHUNK pieces, each once the client's socket has room: what waits for the client
        stays within QUEUE_BYTES, and one that takes nothing for read_seconds is closed."""
        view = memoryview(body)
        for start in range(0, len(view), SEND_CHUNK):
            try:
                await asyncio.wait_for(
                    _piece_to(guest, response, view[start : start + SEND_CHUNK]), self.bounds.read_seconds
                )
            except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11 on
                if guest.transport is not None:
                    guest.transport.abort()
                raise ClientGone(f"it took nothing in {self.bounds.read_seconds:g} s") from None


async def _piece_to(guest: Guest, response: web.StreamResponse, piece: memoryview) -> None:
    """One piece, once the client's socket buffer has room for it."""
    await guest.room.wait()
    await response.write(piece)


def _response(content_type: str, length: int) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": content_type})
    response.content_length = length
    return response


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def _pieces(path: Path) -> AsyncIterator[bytes]:
    """A file's bytes, SEND_CHUNK at a time: a large report.html is never whole in memory."""
    with path.open("rb") as file:
        while piece := file.read(SEND_CHUNK):
            yield piece


def _one_debug_line(loop: asyncio.AbstractEventLoop, context: MutableMapping[str, Any]) -> None:
    """What goes wrong on the server's loop (a connection it could not accept): a debug line in run.log."""
    log.debug("the live page: %s %r", context.get("message", ""), context.get("exception", ""))
