"""A run's budgets (--max-cost, --max-calls, --max-tokens): once one is spent, no further model request starts.

Every request is counted when it starts, so --max-calls N lets at most N
requests reach the server; the budget is spent once the last of them is
answered (or has failed), not before: a request the server refused outright,
for a reply format it does not take, is given back and asked again. Tokens
and cost are known only when a reply comes: the requests already under way
then finish, and may go past those two.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial


@dataclass(frozen=True)
class Limits:
    """What a run may spend on its models; None: no bound."""

    max_cost: float | None = None  # dollars
    max_calls: int | None = None  # requests, retries and re-prompts included
    max_tokens: int | None = None  # prompt and completion tokens

    def __bool__(self) -> bool:
        return any(limit is not None for limit in (self.max_cost, self.max_calls, self.max_tokens))


class Budget:
    """What the run's model requests have spent, against its Limits; shared by every agent's thread."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0
        self.spent: str | None = None  # the budget that ran out, as its option's name (max_calls, say)
        self._lock = threading.Lock()
        self._when_spent: list[Callable[[str], None]] = []

    def when_spent(self, callback: Callable[[str], None]) -> None:
        """Call `callback(budget)` once, when a budget runs out (at once if one has)."""
        with self._lock:
            spent = self.spent
            if spent is None:
                self._when_spent.append(callback)
        if spent is not None:
            callback(spent)

    def admit(self) -> bool:
        """Count a request about to start; False, and nothing counted, once a budget is spent or the last
        request --max-calls allows is under way."""
        with self._lock:
            if self.spent is not None or self._calls_taken():
                return False
            self.calls += 1
        return True

    def give_back(self) -> None:
        """Take back a request admitted that the server refused outright (a reply format it does not take):
        as if it had never been made."""
        with self._lock:
            self.calls -= 1

    def refusing(self) -> str:
        """The budget that refuses further requests, as its option's name (max_calls, say)."""
        with self._lock:
            return self.spent or "max_calls"

    def charge(self, tokens: int, cost: float | None, requests: int = 0) -> None:
        """Add what a request admitted spent, once its reply (or its failure) is in, and `requests` made
        besides those admitted (a replay admits none)."""
        with self._lock:
            newly = self._add(calls=requests, tokens=tokens, cost=cost or 0.0)
        self._tell(newly)

    def _add(self, calls: int = 0, tokens: int = 0, cost: float = 0.0) -> list[Callable[[], None]]:
        """Add to the counts, under the lock; the callbacks to call, outside it, if a budget ran out now."""
        self.calls += calls
        self.tokens += tokens
        self.cost += cost
        if self.spent is not None or (spent := self._exhausted()) is None:
            return []
        self.spent = spent
        callbacks, self._when_spent = self._when_spent, []
        return [partial(callback, spent) for callback in callbacks]

    @staticmethod
    def _tell(callbacks: list[Callable[[], None]]) -> None:
        for callback in callbacks:
            callback()

    def _calls_taken(self) -> bool:
        return self.limits.max_calls is not None and self.calls >= self.limits.max_calls

    def _exhausted(self) -> str | None:
        limits = self.limits
        if self._calls_taken():
            return "max_calls"
        if limits.max_tokens is not None and self.tokens >= limits.max_tokens:
            return "max_tokens"
        if limits.max_cost is not None and self.cost >= limits.max_cost:
            return "max_cost"
        return None
