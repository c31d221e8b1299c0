"""What both schedules share: agents hand in their steps, the last of a turn commits it, and each agent
waits for its own next turn."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Protocol

from nodes.interfaces import RunStopped, StepReport
from perception.base import Message


class Commit(Protocol):
    """Applies a turn: its reports in agent order, at time `at`; `complete` is False for a turn cut short by a
    stop; `step` is the team's step for its curves, where it is not the tick's (step_at(at))."""

    def __call__(
        self, reports: list[StepReport], at: float, complete: bool = True, step: float | None = None
    ) -> None: ...


class TurnTaking:
    """A schedule's hand-in and stop; a subclass says whose turn it is and what ends a turn."""

    never_delivered: list[Message]  # messages due when the run had ended

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: dict[str, StepReport] = {}  # agent_id -> its report of the turn under way
        self._stopped = False
        self._finishing = False  # the turn under way is the last

    def hand_in(self, report: StepReport) -> bool:
        """Hand in a finished step; returns when the agent's next turn comes (True), or it has none (False)."""
        agent_id = report.agent_id
        with self._cond:
            if self._stopped:
                raise RunStopped()
            self._pending[agent_id] = report
            if self._turn_complete():
                try:
                    self._end_turn()
                    self._stopped = self._finishing
                except BaseException:
                    self._stopped = True  # the others must not wait for a turn that cannot come
                    raise
                finally:
                    self._cond.notify_all()
            while (agent_id in self._pending or agent_id not in self._turn()) and self._goes_on(agent_id):
                if self._stopped:
                    break
                self._cond.wait()
            if self._stopped:  # its step is committed if it was handed in; no more steps
                raise RunStopped()
            return self._goes_on(agent_id)

    def _turn_complete(self) -> bool:
        """Whether every agent of the turn has handed in: the sets are compared only once the counts
        agree, so that a team of N agents does not build N sets of up to N names a turn."""
        turn = self._turn()
        return len(self._pending) >= len(turn) and set(self._pending) == turn

    def stop(self) -> None:
        """Stop every agent; steps already handed in are still committed."""
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            try:
                if self._pending:
                    self._commit_pending(complete=False)
            finally:
                self._cond.notify_all()

    def finish(self) -> None:
        """End the run once the turn under way is committed: its steps finish, no other begins."""
        with self._cond:
            self._finishing = True

    def _turn(self) -> set[str]:
        """The agents whose turn is under way."""
        raise NotImplementedError

    def _goes_on(self, agent_id: str) -> bool:
        """Whether the agent has a turn to come (or under way)."""
        raise NotImplementedError

    def _end_turn(self) -> None:
        """Commit the turn's reports and start the next turn."""
        raise NotImplementedError

    def _commit_pending(self, complete: bool = True) -> None:
        """Commit the reports handed in; `complete` is False for a turn cut short by a stop."""
        raise NotImplementedError

    def _pending_in_order(self, order: Mapping[str, int]) -> list[StepReport]:
        reports = [self._pending[a] for a in sorted(self._pending, key=order.__getitem__)]
        self._pending = {}
        return reports
