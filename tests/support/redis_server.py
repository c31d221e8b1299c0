"""A real Redis server for tests, started by the session on a free port in a temporary directory.

Loaded as a plugin (`pytest_plugins = ("tests.support.redis_server",)`), so that
every module shares one server. Without `redis-server` the tests skip, except
in CI (CI=true), where they must run.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

from tests.support.ports import free_port

START_SECONDS = 10


class RedisServer:
    """A redis-server process; `url` reaches it, `stop()` ends it (for the tests of a server that goes away).
    Made once it answers; RuntimeError where it does not within START_SECONDS. bench/split_team.py uses it too."""

    def __init__(self, folder):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                folder,
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    def _answers(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


def start_redis(folder):
    if shutil.which("redis-server") is None:
        reason = "redis-server is not installed: apt-get install redis-server"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        return RedisServer(folder)
    except RuntimeError as failed:
        pytest.fail(str(failed))


@pytest.fixture(scope="session")
def redis_server():
    """One server for the session; each test keeps to its own run id."""
    with tempfile.TemporaryDirectory(prefix="redis-") as folder:
        server = start_redis(folder)
        yield server
        server.stop()


@pytest.fixture
def own_redis_server(tmp_path):
    """A server of the test's own, which it may stop."""
    server = start_redis(str(tmp_path))
    yield server
    server.stop()


@pytest.fixture
def run_id():
    return f"test-{uuid.uuid4().hex[:12]}"
