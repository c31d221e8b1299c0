"""Steps in lock-step: agents work concurrently, the team changes only between steps.

During a step an agent only reads the team's state (and empties its own
mailbox). What it changes for the others (messages, discoveries, its
position, its trace line) it hands in. When the last agent of the step
arrives, `commit` runs once with every report in agent order, so delivery
and discovery order never depend on thread timing.

An agent may take part every n rounds only (a coordinator with tick_interval
n): it ticks in rounds 1, 1 + n, 1 + 2n, ... and waits out the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from explorer.schedule.turns import Commit, TurnTaking
from nodes.interfaces import StepReport


class LockstepSchedule(TurnTaking):
    """The `Schedule` (nodes/interfaces.py) of rounds: every agent takes step k before any takes k + 1."""

    def __init__(
        self,
        agent_ids: Sequence[str],
        max_steps: int,
        commit: Commit,
        every: Mapping[str, int] | None = None,
    ) -> None:
        """`commit(reports, at, complete)` applies a round (at = round - 1, lock-step's clock);
        `every` is {agent_id: rounds between its ticks}, 1 where not given."""
        super().__init__()
        self._order = {agent_id: i for i, agent_id in enumerate(agent_ids)}
        self._every = {agent_id: (every or {}).get(agent_id, 1) for agent_id in agent_ids}
        self._max_steps = max_steps
        self._commit = commit  # called with the round's reports in agent order
        self._round = 1
        self._due = self._due_in(1)
        self.never_delivered = []  # a round delivers its messages when it is committed: always

    def _turn(self) -> set[str]:
        return self._due

    def _goes_on(self, agent_id: str) -> bool:
        every = self._every[agent_id]
        upcoming = self._round + (-(self._round - 1)) % every  # its next round from the one under way
        return upcoming <= self._max_steps

    def _end_turn(self) -> None:
        self._commit_pending()

    def _commit_pending(self, complete: bool = True) -> None:
        at = self._round - 1
        reports = [_on_the_clock(report, at) for report in self._pending_in_order(self._order)]
        self._round += 1
        self._due = self._due_in(self._round)
        self._commit(reports, at, complete)

    def _due_in(self, round_: int) -> set[str]:
        return (
            {a for a, every in self._every.items() if (round_ - 1) % every == 0} if round_ <= self._max_steps else set()
        )


def _on_the_clock(report: StepReport, at: int) -> StepReport:
    """Lock-step's clock: round r is at t = r - 1, and a message reaches its mailbox as it is sent."""
    if report.record is not None:
        report.record.time = at
    return replace(report, outgoing=[replace(m, sent_at=at, delivered_at=at) for m in report.outgoing])
