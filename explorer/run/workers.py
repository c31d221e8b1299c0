"""The run's threads: each agent's flow (and a split team's relays) on a thread of its own, until all end."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from explorer.records.summary import BUDGET_EXHAUSTED
from explorer.records.trace import DiskWriteError
from explorer.run.stop import FirstFailure, RunStop
from memory.embedder import EmbedderError
from nodes.interfaces import RunStopped, StopRun
from nodes.state import AgentState, CoordinatorState
from perception.base import PerceptionStopped

log = logging.getLogger("explorer")

Work = Callable[[], None]  # what a thread runs: an agent's flow to its end, or a relay


class Flow(Protocol):
    """A PocketFlow flow (nodes/flow.py, nodes/coordinator.py): it runs on its agent's shared store."""

    def run(self, shared: AgentState | CoordinatorState) -> object: ...


def flow_work(build_flow: Callable[[], Flow], shared: AgentState | CoordinatorState) -> Work:
    """The work of running a fresh flow on `shared`, an agent's state or the coordinator's."""

    def work() -> None:
        build_flow().run(shared)

    return work


def run_workers(
    workers: list[tuple[str, Work]], stop: RunStop, failure: FirstFailure, stopping: Callable[[], None]
) -> str:
    """Run each (name, work) on its own thread until all end; the run's status."""
    finished = [threading.Event() for _ in workers]
    threads = [
        threading.Thread(target=_work_main, args=(name, work, stop, failure, done), name=name, daemon=True)
        for (name, work), done in zip(workers, finished)
    ]
    for thread in threads:
        thread.start()
    try:
        _wait(finished)
    except KeyboardInterrupt as interrupt:
        stopping()
        log.warning(
            "Interrupted (%s): stopping now, abandoning model calls in flight; the finished steps are kept",
            interrupt or "Ctrl-C",
        )
        stop(interrupted=True)
        # Each agent leaves at its next hand-in; the interpreter must not
        # shut down under a thread that is still inside torch.
        _wait(finished)
    for thread in threads:
        thread.join()
    if stop.interrupted or failure.message:
        return "interrupted" if stop.interrupted else "failed"
    return BUDGET_EXHAUSTED if stop.budget_spent else "completed"


def _work_main(name: str, work: Work, stop: RunStop, failure: FirstFailure, finished: threading.Event) -> None:
    try:
        work()
    except RunStopped:
        pass
    except (StopRun, PerceptionStopped, EmbedderError, DiskWriteError) as error:
        log.error("%s: %s", name, error)
        failure.record(str(error), getattr(error, "users_mistake", False))
        stop()
    except BaseException as error:  # a SystemExit too: a thread that ends unseen leaves its team waiting
        log.error("%s failed: %r", name, error)
        log.debug("%s traceback", name, exc_info=True)
        failure.record(f"{name} failed: {error!r}")
        stop()
    finally:
        finished.set()


def _wait(events: list[threading.Event]) -> None:
    # Not Thread.join: on Python 3.11, Ctrl-C during join() can mark a thread
    # that is still running as stopped (bpo-45274's cleanup).
    for event in events:
        while not event.wait(0.1):  # short waits keep Ctrl-C responsive everywhere
            pass
