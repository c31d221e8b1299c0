"""`python main.py --serve 0 ...` in a process of its own, its live page's address read from what it prints.

For the tests of the live page and the script that takes its screenshot. Leaving the block sends Ctrl-C
(SIGINT), which ends the serving after the run, and kills a process that does not end in time.
"""

from __future__ import annotations

import os
import queue
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path

from harness import MAIN, ROOT

PACED = "harness.paced_policy:PacedExplorer"  # a plug-in slow enough to watch
WAIT_SECONDS = 240  # for the address, and for the process's end: the machine may be busy


class LiveRun:
    """A run with `--serve`: `url` once it serves; `lines` what it has printed so far; `returncode` at the end."""

    def __init__(self, *args: str, serve: str = "0", hold: Path | None = None, files: int | None = None) -> None:
        """`hold`: the paced policy's agents wait at its HOLD_STEP until this file is there. `files`: the
        process may open this many files at most (RLIMIT_NOFILE, soft and hard)."""
        self.args = [sys.executable, MAIN, "--serve", serve, *args]
        self.env = {**os.environ, "PACED_HOLD": str(hold)} if hold else None
        self.files = files
        self.lines: queue.Queue[str] = queue.Queue()
        self.printed: list[str] = []
        self.returncode: int | None = None

    def __enter__(self) -> LiveRun:
        self.process = subprocess.Popen(
            self.args,
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            preexec_fn=None if self.files is None else self._limit_files,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.url = self.wait_for("Watch the run at ").split("Watch the run at ")[1].strip()
        return self

    def _limit_files(self) -> None:
        """In the child, before it runs: its descriptor limit."""
        files = self.files or resource.RLIM_INFINITY
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for(self, text: str, seconds: float = WAIT_SECONDS) -> str:
        """The first line printed from now on that holds `text`; AssertionError after `seconds`."""
        while True:
            try:
                line = self.lines.get(timeout=seconds)
            except queue.Empty:
                raise AssertionError(
                    f"no line with {text!r} in {seconds} s; printed: {''.join(self.printed)}"
                ) from None
            self.printed.append(line)
            if text in line:
                return line

    def stop(self) -> int:
        """Ctrl-C; the exit code. `printed` then holds every line the process printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.returncode = self.process.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.returncode = self.process.wait()
        self.reader.join(WAIT_SECONDS)
        while not self.lines.empty():
            self.printed.append(self.lines.get())
        return self.returncode

    def __exit__(self, *exc: object) -> None:
        self.stop()
