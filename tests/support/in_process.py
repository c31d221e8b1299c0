"""main.py's `main` run inside the test's own process, for tests whose point is the run, not the process.

A process start costs seconds (the run's imports, each time); a call in this process pays them once per
worker. Tests of what only a process shows (signals, start-up, the interpreter's exit, a bounded address
space) start main.py instead (tests/test_cli.py's `main`), and a few refusals are checked both ways so that
the real entry point stays covered.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from explorer.cli.main import main
from explorer.run import prepare, runner
from memory.embedder import SentenceEmbedder


def main_here(
    *args: str, cwd: str | Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python main.py ARGS` (from `cwd`, in the environment `env`) as main(argv) runs it here; what
    subprocess.run(..., capture_output=True, text=True) would give back. For what runs no run in this process:
    a refusal, a one-shot action, a sweep (whose runs are processes of their own). A run that left a handler on
    the "explorer" logger fails the test."""
    handlers = list(logging.getLogger("explorer").handlers)
    out, err = io.StringIO(), io.StringIO()
    with _directory(cwd), _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert logging.getLogger("explorer").handlers == handlers, "the run left a handler on the explorer logger"
    return subprocess.CompletedProcess(["main.py", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _directory(cwd: str | Path | None) -> Iterator[None]:
    """In `cwd` (where given) for the block; back where it was after."""
    if cwd is None:
        yield
        return
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """os.environ is `env` (where given) for the block, as a process started with env= would have it."""
    if env is None:
        yield
        return
    before = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


class InProcessMain:
    """`run(*args)`: main_here for a run: on the session's embedder (a run's own would load the model again, and
    its threads would keep it for the rest of the session), left as it was found. main(argv) restores the
    signal handlers."""

    def __init__(self, embedder: SentenceEmbedder):
        self.embedder = embedder

    def run(
        self, *args: str, cwd: str | Path | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        embedder = self.embedder
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(embedder, "on_batch", embedder.on_batch)  # the run sets its telemetry's
            patch.setattr(
                runner, "start_embedder", lambda config, given: prepare.start_embedder(config, given or embedder)
            )
            return main_here(*args, cwd=cwd, env=env)


def sweep_here(
    sweep_file: Path, *args: str, cwd: str | Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python main.py --sweep FILE ARGS` as harness.sweeps.sweep runs it, but the sweep in this process: its runs
    are still processes of their own. Not for a tracked sweep or a Ray executor, whose libraries keep state."""
    return main_here("--sweep", str(sweep_file), *args, cwd=cwd, env=env)
