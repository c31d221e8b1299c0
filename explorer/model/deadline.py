"""A call the run can walk away from: it runs on a thread of its own, abandoned at its deadline or when the
run stops. Model requests go through it (explorer/model/client.py), and so do plug-in policies' decisions
(explorer/policies/plugin.py): neither a server that trickles nor a `decide` that blocks holds the run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
POLL_SECONDS = 0.1  # how soon a stopping run, or a deadline, is noticed


class Abandoned(Exception):
    """The run is stopping: the call was given up."""


class PastDeadline(TimeoutError):
    """The call's time is up: it was given up (a TimeoutError the call itself raised is not one)."""


def within_deadline(call: Callable[[], T], timeout: float, cancelled: threading.Event, name: str) -> T:
    """call()'s result (or what it raised, BaseExceptions too), on a daemon thread called `name`; PastDeadline
    once `timeout` seconds have passed in all, Abandoned once `cancelled` is set. An abandoned call is left to
    end on its own thread."""
    outcome: dict[str, T] = {}
    raised: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome["result"] = call()
        except BaseException as error:  # handed to the caller's thread: a SystemExit must not end this one unseen
            raised.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not done.wait(POLL_SECONDS):
        if cancelled.is_set():
            raise Abandoned()
        if time.monotonic() >= deadline:
            raise PastDeadline(f"no whole reply within {timeout:g} s")
    if raised:
        raise raised[0]
    return outcome["result"]
