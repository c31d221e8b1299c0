"""A real Arize Phoenix (`phoenix serve`) on free ports, for the telemetry tests and bench/telemetry.py.

Phoenix is about 850 MB of packages with pins of its own, so it lives in a virtual environment of its own
(README, Telemetry): `PHOENIX` names its `phoenix` command, else the checkout's `.venv-phoenix/bin/phoenix`,
else `phoenix` on the PATH. Spans are read back through its REST API (`/v1/projects/NAME/spans`), with the
standard library: the tests' own environment needs no Phoenix package.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from explorer.testing.ports import free_port
from harness import ROOT

START_SECONDS = 120  # about 17 s on an idle machine; much more under a full test run's load
PAGE_SPANS = 1000  # Phoenix's largest page


def phoenix_command() -> str | None:
    """The `phoenix` command to start, where there is one."""
    given = os.environ.get("PHOENIX")
    if given:
        return given
    beside = ROOT / ".venv-phoenix" / "bin" / "phoenix"
    return str(beside) if beside.is_file() else shutil.which("phoenix")


class PhoenixServer:
    """`phoenix serve` with its working directory in `folder`, on free ports of loopback (its gRPC port, which
    Phoenix binds on every interface, is free too and unused). `url` reaches it once made; RuntimeError where it
    does not answer within START_SECONDS, with the end of its log."""

    def __init__(self, command: str, folder: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "phoenix.log"
        environment = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(folder),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [command, "serve"],
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # stopped with its workers
            )
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"phoenix serve did not answer on port {self.port}:\n{tail}")
            time.sleep(0.5)

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/v1/projects", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def projects(self) -> list[dict[str, Any]]:
        """Phoenix's projects: each with its `name` and `id`."""
        with urllib.request.urlopen(f"{self.url}/v1/projects", timeout=30) as answer:
            return json.load(answer)["data"]

    def spans(self, project: str = "default") -> list[dict[str, Any]]:
        """Every span Phoenix holds in `project`, as its REST API gives them."""
        spans: list[dict[str, Any]] = []
        cursor = None
        while True:
            query = f"limit={PAGE_SPANS}" + (f"&cursor={cursor}" if cursor else "")
            with urllib.request.urlopen(f"{self.url}/v1/projects/{project}/spans?{query}", timeout=30) as answer:
                page = json.load(answer)
            spans += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return spans

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
