"""`--serve`'s page is a guest in the run's process: whatever its clients do, the run keeps its descriptors,
its memory and its console, and only the page's own address (and token, beyond loopback) is answered.

Every test that waits has a bound: sockets time out, polls end at a deadline, and the runs are
harness/live_run.py's, which waits WAIT_SECONDS at most for each line and for the end.
"""

import json
import re
import resource
import socket
import struct
import time
import urllib.error
import urllib.request
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit

import pytest

from explorer.cli.page_access import (
    ACCEPT_BURST,
    FILES_PER_CLIENT,
    MAX_CLIENTS,
    RESERVED_FILES,
    announcement,
    client_cap,
    host_name,
    page_access,
)
from explorer.cli.web_server import QUEUE_BYTES, READ_SECONDS, REQUEST_SECONDS, ClientBounds, LiveServer, bind
from harness.live_run import PACED, LiveRun
from tests.support.paths import ROOT

pytest_plugins = ("tests.support.browser",)
BIG_STATE = json.dumps({"cells": "x" * 6_000_000})  # about a 300 x 300 world's page state


@contextmanager
def served(state="null", bounds=None):
    """A LiveServer on loopback in this process, its state `state` already made."""
    server = LiveServer(
        bind("127.0.0.1", 0),
        "<html>the page</html>",
        "// plotly",
        page_access("127.0.0.1", "127.0.0.1"),
        bounds or ClientBounds(),
    )
    server.source = lambda: state
    server.wake()
    try:
        yield server
    finally:
        server.close()


def ask(port, path="/events", host=None, headers="", receive_buffer=None, timeout=10.0, method="GET"):
    """A client socket that has sent its GET and reads nothing yet; `receive_buffer` small: it takes little."""
    client = socket.socket()
    if receive_buffer:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    client.settimeout(timeout)
    client.connect(("127.0.0.1", port))
    client.sendall(f"{method} {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n{headers}\r\n".encode())
    return client


def status_of(client):
    """The HTTP status the client was answered, read from its first line."""
    head = b""
    while b"\r\n" not in head:
        piece = client.recv(1)
        if not piece:
            raise ConnectionError(f"closed after {head!r}")
        head += piece
    return int(head.split()[1])


def until(test, seconds=20.0):
    """`test()` once it is true; AssertionError after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := test():
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s")


def closed(client, seconds):
    """Whether the server has closed the client's connection within `seconds` (what it sent is drained)."""
    client.settimeout(seconds)
    deadline = time.monotonic() + seconds
    with suppress(TimeoutError):
        while time.monotonic() < deadline:
            try:
                if not client.recv(1 << 20):
                    return True
            except ConnectionResetError:
                return True
    return False


def test_past_the_cap_a_client_gets_503_at_once_and_a_place_frees_when_one_leaves():
    with served(bounds=ClientBounds(clients=2)) as server:
        first, second = ask(server.port), ask(server.port)
        assert status_of(first) == 200 and status_of(second) == 200
        third = ask(server.port, timeout=5)
        assert status_of(third) == 503
        assert closed(third, 5)
        first.close()
        until(lambda: len(server.queues()) == 1)
        fourth = ask(server.port)
        assert status_of(fourth) == 200
        for client in (second, third, fourth):
            client.close()


def test_idle_clients_that_read_nothing_hold_at_most_their_bounded_queue():
    def resident():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()

    with served(BIG_STATE) as server:
        before = resident()
        clients = [ask(server.port, receive_buffer=4096) for _ in range(50)]
        until(lambda: len(server.queues()) == MAX_CLIENTS and max(server.queues()) > 0)
        time.sleep(2)  # every client's stream as far as it goes
        queues = server.queues()
        grown = resident() - before
        for client in clients:
            client.close()
    assert len(queues) == MAX_CLIENTS and max(queues) <= QUEUE_BYTES
    # Before, each client held the whole state in its buffer: 50 x 6 MB. Now the state is shared.
    assert grown < 60_000_000, grown


def test_a_client_that_takes_nothing_is_closed_after_its_deadline():
    with served(BIG_STATE, ClientBounds(read_seconds=1.0)) as server:
        client = ask(server.port, receive_buffer=4096)
        assert status_of(client) == 200
        until(lambda: server.queues() == [], seconds=30)
        assert closed(client, 30)


def test_a_connection_that_sends_no_request_is_closed_after_its_deadline():
    with served(bounds=ClientBounds(request_seconds=0.5)) as server:
        silent = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        assert closed(silent, 10)
        until(lambda: server.queues() == [])


def test_a_head_request_for_the_events_is_answered_and_its_place_freed():
    with served(BIG_STATE, ClientBounds(clients=1)) as server:
        for _ in range(3):  # one place: each must have been given back
            head = ask(server.port, method="HEAD", headers="Connection: close\r\n")
            assert status_of(head) == 200 and closed(head, 10)
            head.close()
            until(lambda: server.queues() == [])


def test_a_slow_reader_is_sent_the_latest_state_not_each_one_it_missed():
    states = iter(range(1, 1000))
    with served() as server:
        server.source = lambda: json.dumps({"version": next(states), "pad": "x" * 3_000_000})
        client = ask(server.port, receive_buffer=4096, timeout=30)
        for _ in range(8):  # eight states made, at least REFRESH_SECONDS apart, while the client reads nothing
            server.wake()
            time.sleep(0.6)
        server.source = lambda: json.dumps({"version": "last"})
        server.wake()
        seen, text = [], b""
        while b'"last"' not in text:
            text += client.recv(1 << 20)
        seen = re.findall(rb'"version": (\d+|"last")', text)
        client.close()
    assert len(seen) <= 4 and seen[-1] == b'"last"', seen  # the one being sent, perhaps the next, the latest


def test_a_request_for_another_host_name_is_refused_at_once(tmp_path):
    with LiveRun("--agents", "1", "--steps", "2", "--run-dir", str(tmp_path / "run"), "-q") as run:
        run.wait_for("until Ctrl-C")
        port = urlsplit(run.url).port
        for path in ("/", "/events", "/report.html", "/plotly.min.js"):
            rebound = ask(port, path, host=f"evil.example:{port}", timeout=10)
            assert status_of(rebound) == 421, path
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "LOCALHOST."):
            assert status_of(ask(port, "/", host=host)) == 200, host
        assert status_of(ask(port, "/", host=" ")) == 421  # none at all


def test_beyond_loopback_the_page_asks_for_its_token_and_never_writes_it_down(tmp_path):
    run_dir = tmp_path / "run"
    with LiveRun("--agents", "2", "--steps", "3", "--run-dir", str(run_dir), "-q", serve="0.0.0.0:0") as run:
        run.wait_for("until Ctrl-C")
        address = urlsplit(run.url)
        token = dict(part.split("=", 1) for part in address.query.split("&"))["token"]
        base = f"http://127.0.0.1:{address.port}/"
        assert refused(base) == 401 and refused(base + "?token=" + token[::-1] + "x") == 401
        assert refused(base + "events", {"Authorization": "Bearer nope"}) == 401
        with urllib.request.urlopen(base + "?token=" + token, timeout=10) as page:
            cookie = page.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        with urllib.request.urlopen(
            request(base + "report.html", {"Cookie": cookie.split(";")[0]}), timeout=10
        ) as report:
            assert b"run report" in report.read()
        with urllib.request.urlopen(
            request(base + "events", {"Authorization": f"Bearer {token}"}), timeout=10
        ) as events:
            assert events.readline().startswith(b"data: {")
    printed = "".join(run.printed)
    assert run.returncode == 0 and printed.count(token) == 1
    assert "listens on every interface" in printed and "prompts, reasons and messages" in printed
    assert address.hostname not in ("0.0.0.0", "::") and "0.0.0.0" not in printed
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


def request(url, headers):
    return urllib.request.Request(url, headers=headers)


def refused(url, headers=None):
    """The status a request without the right token gets."""
    try:
        with urllib.request.urlopen(request(url, headers or {}), timeout=10):
            return 200
    except urllib.error.HTTPError as error:
        return error.code


def test_in_a_browser_the_token_in_the_address_opens_the_page_its_events_and_the_report(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with LiveRun("--agents", "2", "--steps", "4", "--run-dir", str(tmp_path / "run"), "-q", serve="0.0.0.0:0") as run:
        run.wait_for("until Ctrl-C")
        address = urlsplit(run.url)
        browser.get(f"http://127.0.0.1:{address.port}/?{address.query}")
        WebDriverWait(browser, 60, poll_frequency=0.2).until(
            lambda driver: "ended" in driver.find_element(By.ID, "status").text
        )
        browser.get(browser.find_element(By.ID, "report").get_attribute("href"))  # no token in it: the cookie
        assert "run report" in browser.title
    assert run.returncode == 0


def test_a_flood_of_clients_under_a_256_descriptor_limit_cannot_sink_the_run(tmp_path):
    run_dir, hold = tmp_path / "run", tmp_path / "go on"
    args = ("--agents", "2", "--steps", "6", "--model", PACED, "--run-dir", str(run_dir), "-q")
    with LiveRun(*args, hold=hold, files=256) as run:
        port = urlsplit(run.url).port
        clients = []
        for _ in range(400):  # while the agents wait at the paced policy's HOLD_STEP
            with suppress(OSError):
                clients.append(ask(port, receive_buffer=4096, timeout=5))
        answers = []
        for client in clients:
            try:
                answers.append(status_of(client))
            except OSError:
                answers.append(None)
        hold.touch()
        run.wait_for("until Ctrl-C")
        for client in clients:
            client.close()
    assert run.returncode == 0, "".join(run.printed)
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "completed"
    assert (run_dir / "report.html").is_file() and any((run_dir / "memory").iterdir())
    assert answers.count(200) == MAX_CLIENTS and answers.count(503) > len(answers) // 2, answers
    assert "Traceback" not in "".join(run.printed)


def test_clients_that_leave_mid_write_leave_no_trace_in_the_console_under_q(tmp_path):
    args = ("--agents", "2", "--steps", "8", "--model", PACED, "--world", "gen:office?size=250x250")
    with LiveRun(*args, "--run-dir", str(tmp_path / "run"), "-q") as run:
        port = urlsplit(run.url).port
        for _ in range(3):
            clients = [ask(port, receive_buffer=4096) for _ in range(20)]
            time.sleep(1.0)
            for client in clients:
                client.recv(4096)  # it is being sent a state: then it resets the connection
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                client.close()
        run.wait_for("until Ctrl-C")
    printed = "".join(run.printed)
    assert run.returncode == 0
    assert "Traceback" not in printed and "Error handling request" not in printed, printed
    assert "Traceback" not in (tmp_path / "run" / "run.log").read_text()  # a debug line each at most


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.1:8000", "127.0.0.1"), ("[::1]:8000", "::1"), ("Example.COM.", "example.com"), ("host", "host")],
)
def test_a_host_header_is_read_without_its_port_brackets_or_final_dot(header, name):
    assert host_name(header) == name


def test_the_names_answered_are_the_bound_ones_localhost_on_loopback_and_any_address_on_every_interface():
    loopback = page_access("127.0.0.1", "127.0.0.1")
    assert loopback.token is None and loopback.answers("localhost:1") and not loopback.answers("10.0.0.1:1")
    assert not loopback.answers("evil.example") and not loopback.answers(None)
    given = page_access("192.0.2.7", "192.0.2.7")
    assert given.token and given.answers("192.0.2.7:80") and not given.answers("localhost")
    everywhere = page_access("0.0.0.0", "0.0.0.0")
    assert everywhere.answers("10.1.2.3:8000") and everywhere.answers(socket.gethostname())
    assert not everywhere.answers("evil.example:8000")
    assert everywhere.admits(everywhere.token) and not everywhere.admits("x") and not everywhere.admits(None)
    assert page_access("0.0.0.0", "0.0.0.0").token != everywhere.token  # a new one for each page


def test_the_cap_leaves_the_run_its_reserve_of_descriptors():
    assert client_cap(None, 10) == MAX_CLIENTS and client_cap(1024, 10) == MAX_CLIENTS
    small = client_cap(200, 10)
    assert small == (200 - 10 - RESERVED_FILES - 2 * ACCEPT_BURST) // FILES_PER_CLIENT < MAX_CLIENTS
    assert client_cap(100, 10) == 0


def test_the_console_says_where_beyond_loopback_and_why_fewer_clients_with_the_token_once():
    everywhere = page_access("0.0.0.0", "0.0.0.0")
    assert everywhere.token is not None
    lines = announcement("http://host:8000/", everywhere, "0.0.0.0", 5, 200)
    assert "listens on every interface" in lines[0] and "prompts, reasons and messages" in lines[0]
    assert lines[1].startswith("The live page takes 5 clients at once") and "ulimit -n" in lines[1]
    assert lines[2] == f"Watch the run at http://host:8000/?token={everywhere.token}"
    assert "".join(lines).count(everywhere.token) == 1
    assert announcement("http://127.0.0.1:8000/", page_access("127.0.0.1", "127.0.0.1"), "127.0.0.1", 32, 1024) == [
        "Watch the run at http://127.0.0.1:8000/"
    ]


def test_the_options_page_and_the_readme_state_the_pages_bounds_and_what_beyond_loopback_takes():
    limits = " ".join((ROOT / "docs" / "options.md").read_text().split())
    assert f"at most {MAX_CLIENTS} clients at once" in limits and f"{RESERVED_FILES} descriptors" in limits
    assert f"{QUEUE_BYTES // 1024} KiB" in limits
    assert f"{READ_SECONDS:g} s" in limits and f"{REQUEST_SECONDS:g} s" in limits
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "access token" in readme and "?token=" in readme
