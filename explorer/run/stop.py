"""How a run stops: the first failure it met, and the one stop that ends it here (and, for a split team, everywhere)."""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from explorer.model.client import CallGate
from explorer.team.split import SplitTeam
from nodes.interfaces import StopRun

log = logging.getLogger("explorer")


class RunFailed(RuntimeError):
    """The run could not go on; the summary and trace hold what it did."""

    def __init__(self, message: str, users_mistake: bool = False) -> None:
        super().__init__(message)
        self.users_mistake = users_mistake  # e.g. an API key the provider refuses


class FirstFailure:
    """What stopped the run: the first agent's failure; later ones are only logged. Agents' threads share it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.message: str | None = None
        self.users_mistake = False

    def record(self, message: str, users_mistake: bool = False) -> None:
        with self._lock:
            if self.message is None:
                self.message, self.users_mistake = message, users_mistake


class Stoppable(Protocol):
    """A schedule, as far as stopping it goes: agents waiting on it leave at their next hand-in."""

    def stop(self) -> None: ...

    def finish(self) -> None:
        """End the run once the turn under way is committed."""
        ...


class RunStop:
    """Stops the run here, once: on an agent's failure, Ctrl-C, or (for a split team) the team's word.

    A split team's other processes are told why, so that one process's
    failure or Ctrl-C stops the whole team.
    """

    def __init__(
        self, gate: CallGate, schedule: Stoppable, failure: FirstFailure, team: SplitTeam | None = None
    ) -> None:
        self.gate, self.schedule, self.failure, self.team = gate, schedule, failure, team
        self.interrupted = False  # by Ctrl-C here, or in a teammate's process
        self.budget_spent: str | None = None  # the budget that ran out (max_calls, say), if one did
        if gate.budget:
            gate.budget.when_spent(self.spend)

    def spend(self, budget: str) -> None:
        """A budget ran out: no further model request starts, the steps under way finish, and the run ends."""
        self.budget_spent = budget
        log.warning(
            "The run's --%s budget is spent: the steps under way finish, then the run stops", budget.replace("_", "-")
        )
        self.schedule.finish()

    def __call__(self, interrupted: bool = False) -> None:
        self.interrupted |= interrupted
        self.gate.cancel()  # model calls in flight are abandoned: a stop is felt within a second or two
        if self.team:
            here = ", ".join(self.team.local)
            self.team.tell(
                f"{here}: interrupted (Ctrl-C)" if interrupted else f"{here}: {self.failure.message or 'stopped'}",
                "interrupted" if interrupted else "failed",
            )
        try:
            self.schedule.stop()  # commits what was handed in: the store it writes to may be what failed
        except StopRun as error:
            self.failure.record(str(error), error.users_mistake)
            log.debug("stopping: the handed-in steps were not committed: %s", error)

    def by_team(self, reason: str, kind: str) -> None:
        """Another process stopped the team, or fell silent, or the store is gone."""
        if kind == "interrupted":
            log.warning("The team was stopped: %s", reason)
        else:
            self.failure.record(reason)
        self(interrupted=kind == "interrupted")
