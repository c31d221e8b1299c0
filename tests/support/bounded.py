"""Work that could hang, run so that a hang fails the test instead of holding it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def within(seconds: float, work: Callable[[], T]) -> T:
    """work()'s result, or what it raised, from a daemon thread; the test fails if it has not returned
    after `seconds` (the thread is left behind)."""
    outcome: dict[str, T] = {}
    raised: list[BaseException] = []

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as error:  # handed to the test, whatever it is
            raised.append(error)

    thread = threading.Thread(target=run, name="bounded", daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds:g} s: it hangs"
    if raised:
        raise raised[0]
    return outcome["result"]
