"""A redis-server process on a free port, for the tests (tests/support/redis_server.py) and bench/split_team.py.

Not a pytest plugin, so a bench may import it before pytest has loaded the plugins.
"""

import socket
import subprocess
import time

from explorer.testing.ports import free_port

START_SECONDS = 10


class RedisServer:
    """A redis-server process; `url` reaches it, `stop()` ends it (for the tests of a server that goes away).
    Made once it answers; RuntimeError where it does not within START_SECONDS."""

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
