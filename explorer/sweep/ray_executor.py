"""Sweeps on a Ray cluster: `--executor ray` (`executor: ray` in the sweep file) runs each run as a Ray task.

The cluster is the one RAY_ADDRESS names, by Ray's own convention, or with none a Ray instance started here
for the sweep, with as many CPUs as --parallel. Each task takes one CPU and runs the command the local
executor runs (explorer/sweep/launch.py), in the sweep's current directory: the nodes share the file system
with the driver, so the run's directory lands in the sweep's `out` as it does locally, and resuming works
the same way. The driver keeps --parallel tasks in flight and holds each run's lock while its task lives.

A run whose node dies is run again: Ray retries a task whose worker died (not one whose run failed), and
the retry removes what the dead attempt left, as a resumed sweep removes an interrupted run. Each attempt
adds a line to out/.sweep/ray-attempts.jsonl, the run's name and the node it ran on, outside the run's own
files. A stop (Ctrl-C, SIGTERM, SIGHUP) cancels the tasks: each stops its run as Ctrl-C stops one, and a
task still going after the grace period is killed with its run.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator

import ray

from explorer.records.errors import ConfigError
from explorer.run.signals import STOP_SIGNALS
from explorer.sweep.compare import runs_text
from explorer.sweep.console import SweepConsole
from explorer.sweep.launch import (
    POLL_SECONDS,
    STOP_GRACE_SECONDS,
    Log,
    Stop,
    claim,
    outcome,
    run_command,
    sweep_resource,
    with_resource,
)
from explorer.sweep.out_dir import SweepOut, run_summary
from explorer.sweep.sweep_file import SweepRun

ATTEMPTS = "ray-attempts.jsonl"  # in out/.sweep: a line per attempt of a run, with the node it ran on
REACH_SECONDS = 5  # RAY_ADDRESS's cluster must take a connection within this
RETRIES = 3  # times a run whose node (or worker) died is run again
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that started it dies
# Loaded before any fork: a run dies with the worker that started it, so a killed task (a dead node, a forced
# cancel) leaves no run writing into a directory its retry removes. Linux only; elsewhere Ray's own clean-up.
LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def run_all(
    todo: list[SweepRun], parallel: int, out: SweepOut, stop: Stop, console: SweepConsole, log: Log
) -> dict[str, str]:
    """Run `todo` as Ray tasks, `parallel` in flight, until done or a stop signal, each `log`ged as it ends;
    {run name: status}."""
    if not todo:  # a finished sweep, resumed: no Ray to join or start
        return {}
    with _connected(parallel):
        return _run_tasks(todo, parallel, out, stop, console, log)


@contextlib.contextmanager
def _connected(parallel: int) -> Iterator[None]:
    """Ray, for the sweep's life: the cluster RAY_ADDRESS names, else a Ray instance of `parallel` CPUs here."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a sweep sends nothing to Ray's servers
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    # The console is the sweep's: Ray's own messages below errors, and the tasks' output, are not shown.
    if os.environ.get("RAY_ADDRESS"):
        check_reachable(os.environ["RAY_ADDRESS"])
        ray.init(logging_level=logging.ERROR, log_to_driver=False)
    else:  # "local": never a cluster `ray start` left on this machine, which ray.init() would join
        ray.init(
            address="local",
            num_cpus=parallel,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
        )
    for signum, handler in handlers.items():  # ray.init takes SIGTERM: a stop signal is the sweep's to note
        signal.signal(signum, handler)
    try:
        yield
    finally:
        ray.shutdown()


def check_reachable(address: str) -> None:
    """A one-line error, before any run is claimed, where nothing listens at RAY_ADDRESS within REACH_SECONDS:
    ray.init would wait in Ray's own reconnect loop for minutes. "auto" and "local" are Ray's to resolve."""
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=REACH_SECONDS).close()
    except ValueError:
        raise ConfigError(f"RAY_ADDRESS={address!r} is not HOST:PORT or ray://HOST:PORT") from None
    except OSError as error:
        raise ConfigError(
            f"RAY_ADDRESS={address}: no Ray cluster answers there within {REACH_SECONDS} s "
            f"({error.strerror or error}); start it, or unset RAY_ADDRESS to run on a Ray of this machine's own"
        ) from None


def _run_tasks(
    todo: list[SweepRun], parallel: int, out: SweepOut, stop: Stop, console: SweepConsole, log: Log
) -> dict[str, str]:
    waiting = deque(todo)
    running: dict[ray.ObjectRef, tuple[SweepRun, int]] = {}  # a task, its run and the run's lock
    outcomes: dict[str, str] = {}

    def finish(task: ray.ObjectRef, told_to_stop: bool) -> None:
        run, lock = running.pop(task)
        try:
            stderr = ray.get(task)
        except ray.exceptions.RayError as error:  # cancelled, or the task itself failed: its last line says why
            stderr = str(error)
        finally:
            os.close(lock)
        run_dir = out.directory / run.name
        status, reason = outcome(run_dir, told_to_stop, stderr)
        outcomes[run.name] = status
        console.finished(len(outcomes), len(todo), run.name, status, reason, run_summary(run_dir))
        log(run)

    try:
        while (waiting or running) and stop.signum is None:
            while waiting and len(running) < parallel:
                run = waiting.popleft()
                lock = claim(run, out, outcomes, console, len(todo))  # held while the task lives: on another node
                if lock is None:
                    continue
                command = run_command(run, out.directory / run.name)
                task = _attempt.remote(run, out, command, os.getcwd(), sweep_resource(run, out.directory))
                running[task] = (run, lock)
            done, _ = ray.wait(list(running), num_returns=1, timeout=POLL_SECONDS)
            for task in done:
                finish(task, told_to_stop=False)
    finally:  # a stop signal, or an error of the sweep's own: no run is left running
        _cancel(list(running), console)
        for task in list(running):
            finish(task, told_to_stop=True)
    return outcomes


def _cancel(tasks: list[ray.ObjectRef], console: SweepConsole) -> None:
    """Stop the tasks' runs as Ctrl-C stops a run; kill what is still going after the grace period."""
    if not tasks:
        return
    console.say(f"Stopping {runs_text(len(tasks))} under way: each writes its summary first.")
    for task in tasks:
        ray.cancel(task)  # a KeyboardInterrupt in the task, which passes it on to its run
    _, late = ray.wait(tasks, num_returns=len(tasks), timeout=STOP_GRACE_SECONDS)
    for task in late:
        ray.cancel(task, force=True)


@ray.remote(num_cpus=1, max_retries=RETRIES)
def _attempt(run: SweepRun, out: SweepOut, command: list[str], cwd: str, resource: str) -> str:
    """One attempt of a run, on the node Ray chose: main.py in a process of its own, `resource` added to the
    node's OpenTelemetry resource attributes; its stderr."""
    _note_attempt(out, run)
    out.clear_attempt(run)  # what an attempt on a node that died left: removed, as a resumed sweep does
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=with_resource(resource, os.environ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=_as_a_run_starts,
        )
        try:
            while process.poll() is None:  # not a blocking wait: Ray's cancel interrupts Python code, not a wait
                time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:  # the sweep was told to stop: the run writes its summary, then ends
            process.send_signal(signal.SIGINT)
            process.wait()
        stderr.seek(0)
        return stderr.read().decode("utf-8", "replace")


def _note_attempt(out: SweepOut, run: SweepRun) -> None:
    """A line in out/.sweep/ray-attempts.jsonl: which node this attempt of the run is on."""
    line = json.dumps({"run": run.name, "node": ray.get_runtime_context().get_node_id()}) + "\n"
    descriptor = os.open(out.state / ATTEMPTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line.encode())  # one short appended write: lines of attempts at once do not mix
    finally:
        os.close(descriptor)


def _as_a_run_starts() -> None:
    """In the run's process, before main.py: it dies with the worker, and a stop signal stops it as it stops a
    run, where a Ray worker ignores or blocks it (both outlast exec)."""
    if LIBC is not None:
        LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
