"""A sweep's runs, each forked from a process that has already imported what a run imports.

A short run spends half its time importing (numpy, scipy, onnxruntime, faiss, plotly, the product itself).
The local executor starts its runs from one multiprocessing forkserver, which imports those modules once for
the sweep, so each run pays for its own work only. Each run still has a process of its own, as `main.py` on
the command line would: its own session (a terminal's Ctrl-C reaches the sweep alone), its environment,
stdout to nowhere, stderr to the file the sweep reads, and the run's lock, held as long as it lives.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Mapping, Sequence
from multiprocessing import reduction
from multiprocessing.process import BaseProcess
from typing import BinaryIO, Protocol

# What a run imports that takes time, imported once by the forkserver with its program's module; the rest each
# run imports itself.
RUN_MODULES = [
    "explorer.run.runner",
    "explorer.report.run_report",
    "memory.onnx_model",
    "memory.vector_memory",
    *("scipy.ndimage", "scipy.optimize", "scipy.sparse.csgraph"),  # explorer.policies.grid_arrays.load_scipy's
]
PROGRAM = "main.py"  # the run's sys.argv[0]: what its own messages call it


class Program(Protocol):
    """The command line's entry point (explorer.cli.main.main), run in the forked process as the program: it reads
    sys.argv, and `started` is when the process started."""

    def __call__(self, *, started: float | None = None) -> int: ...


class Descriptor:
    """A file descriptor handed to the run's process, which holds it as its own."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self):
        # Pickled as the process starts: multiprocessing passes the descriptor itself over the forkserver's socket.
        return (_received, (reduction.DupFd(self.fd),))


def _received(duplicate) -> Descriptor:
    return Descriptor(duplicate.detach())


class ForkedRun:
    """One run in its forked process, with what the local executor asks of a subprocess.Popen."""

    def __init__(self, process: BaseProcess) -> None:
        self.process = process

    def poll(self) -> int | None:
        return self.process.exitcode

    def send_signal(self, signum: int) -> None:
        if self.process.exitcode is None and self.process.pid is not None:
            os.kill(self.process.pid, signum)

    def wait(self, timeout: float | None = None) -> int | None:
        """The exit code, or None where the run is still going after `timeout` seconds."""
        self.process.join(timeout)
        return self.process.exitcode

    def kill(self) -> None:
        self.process.kill()


class RunForks:
    """Starts runs as forks of the forkserver that has the run's modules imported (started with the first run)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload([program.__module__, *RUN_MODULES])

    def start(self, arguments: Sequence[str], environment: Mapping[str, str], stderr: BinaryIO, lock: int) -> ForkedRun:
        """`main.py <arguments>` in a forked process of its own, with `environment`, its stderr to `stderr`, and
        `lock`, a descriptor it holds for its life, passed on (the caller closes its own)."""
        process = self.context.Process(
            target=run_main,
            args=(self.program, list(arguments), dict(environment), Descriptor(stderr.fileno()), Descriptor(lock)),
            name=PROGRAM,
        )
        process.start()
        return ForkedRun(process)


def run_main(
    program: Program, arguments: list[str], environment: dict[str, str], stderr: Descriptor, lock: Descriptor
) -> None:
    """The forked process: set up as `main.py <arguments>` started by a subprocess would be, then run as it.
    `lock`'s descriptor stays open, and the run's lock held, until the process ends."""
    started = time.perf_counter()
    os.setsid()
    os.environ.clear()
    os.environ.update(environment)
    with open(os.devnull, "wb") as nowhere:
        os.dup2(nowhere.fileno(), sys.stdout.fileno())
    os.dup2(stderr.fd, sys.stderr.fileno())
    os.close(stderr.fd)
    sys.argv = [PROGRAM, *arguments]
    sys.exit(program(started=started))
