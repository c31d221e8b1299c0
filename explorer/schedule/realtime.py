"""Steps on the wall clock (`--schedule realtime`): no barrier between agents.

Each agent perceives, decides and acts as soon as its previous step is
committed, and each step is committed to the team as it finishes, one at a
time, under this schedule's lock. What a step sees of the team (its mailbox,
the team's finds and places) is read when it perceives, under the same lock,
so it is the team as some number of commits left it: the step's
`seen_commits`. The clock is wall seconds since the first agent perceived.

Threads' timing decides the order, so a run is reproducible by replay, not
by running it again: every trace line keeps its `commit_index`,
`commit_time` and `seen_commits`, and a replay (--replay-replies) holds each
step until the commits it saw are made, and each commit until its turn in
the recorded order and until every step that saw the team before it has
perceived. It takes the recorded clock too, so it writes the same trace. An
order no run could have committed is refused before the first step (a replay
never waits for a commit that cannot come), and a trace cut short, as a killed
run leaves it, is replayed as far as it goes and then stops the run, saying so.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from explorer.records.clock import clock
from explorer.schedule.recorded import RecordedClock, RecordedCommit
from explorer.schedule.turns import Commit
from nodes.interfaces import RunStopped, StepReport
from perception.base import Message

T = TypeVar("T")


@dataclass(frozen=True)
class _Looked:
    """An agent's step under way: which, and the team it saw (its commits) at what time."""

    step: int
    seen_commits: int


class RealtimeSchedule:
    """The `Schedule` (nodes/interfaces.py) of the wall clock; `perceive` is how its agents look."""

    def __init__(
        self, agent_ids: Sequence[str], max_steps: int, commit: Commit, recorded: RecordedClock | None = None
    ) -> None:
        """`commit(reports, time, complete, step)` applies one step; `recorded` is the replayed run's
        clock, where this run is a replay."""
        self._cond = threading.Condition()
        self._agents = list(agent_ids)
        self._max_steps = max_steps
        self._commit = commit
        self._recorded = recorded
        self._commits = 0  # steps committed
        self._looked: dict[str, _Looked] = {}
        self._started: float | None = None  # perf_counter when the first agent perceived: t = 0
        self._stopped = False
        self._finishing = False  # no step begins any more
        # A replay's: the steps handed in, by their place in the order; per number of commits, the
        # recorded steps that saw the team so and have yet to perceive (that commit waits for them).
        self._waiting: dict[int, StepReport] = {}
        self._to_see: Counter[int] = Counter()
        self._order: dict[tuple[str, int], RecordedCommit] | None = None  # read at the first step
        self._times: dict[int, float] = {}  # when each was committed, by its place in the order
        self._ended: dict[str, int] = {}  # the agents whose record has ended, at their last step
        self.never_delivered: list[Message] = []  # a step's messages reach their mailboxes as it is committed

    def perceive(self, agent_id: str, step: int, look: Callable[[float], T]) -> T:
        """`look(time)` under the lock, so that it reads the team as the commits made so far left it (in a
        replay, once those it saw in the recorded run are made); raises RunStopped, or StopRun where a
        replay's record cannot say."""
        with self._cond:
            recorded = self._recorded_step(agent_id, step) if self._recorded else None
            while recorded is not None and self._commits < recorded.seen_commits and not self._stopped:
                self._cond.wait()
            if self._stopped or (self._finishing and recorded is None):
                raise RunStopped()
            seen = look(recorded.time if recorded is not None else self._now())
            self._looked[agent_id] = _Looked(step, self._commits)
            if recorded is not None:
                self._to_see[recorded.seen_commits] -= 1
                self._commit_ready()
            return seen

    def hand_in(self, report: StepReport) -> bool:
        """Commit the step now (in a replay, at its turn in the recorded order); True if the agent goes on."""
        with self._cond:
            if self._stopped:
                raise RunStopped()
            looked = self._looked.pop(report.agent_id, None)
            if report.record is not None and looked is not None:
                report.record.seen_commits = looked.seen_commits
            if self._recorded is None:
                self._commit_one(report, self._commits, self._now())
            else:
                index = self._recorded_step(report.agent_id, report.step).index
                self._waiting[index] = report
                self._commit_ready()
                while self._commits <= index and not self._stopped:
                    self._cond.wait()
            if self._stopped:  # its step is committed if it was handed in; no more steps
                raise RunStopped()
            return self._goes_on(report.agent_id, report.step)

    def stop(self) -> None:
        """Stop every agent; steps a replay holds for their turn are still committed, in their order."""
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            try:
                for index in sorted(self._waiting):
                    self._commit_one(self._waiting.pop(index), index, self._times[index], complete=False)
            finally:
                self._cond.notify_all()

    def finish(self) -> None:
        """End the run once the steps under way are committed: no other begins (a replay's record says
        which steps there are)."""
        with self._cond:
            self._finishing = True
            self._cond.notify_all()

    def _goes_on(self, agent_id: str, step: int) -> bool:
        if self._recorded is None:
            return step < self._max_steps and not self._finishing
        if (agent_id, step + 1) in (self._order or {}):  # read by now: the step was found in it
            return True
        self._ended[agent_id] = step
        if len(self._ended) == len(self._agents):
            self._check_whole()
        return False

    def _check_whole(self) -> None:
        """A replay's, once every agent's record has ended: StopRun where one ended short of its steps
        though nothing finished the run (a budget, every object found), as the trace of a killed run does."""
        short = [
            (agent_id, self._ended[agent_id]) for agent_id in self._agents if self._ended[agent_id] < self._max_steps
        ]
        if short and not self._finishing:
            assert self._recorded is not None
            ends = ", ".join(f"{agent_id} at step {step}" for agent_id, step in short)
            raise self._recorded.stop(
                f"its trace ends before the recorded run did ({ends}, of {self._max_steps}): it was cut short, "
                "as a killed run's is, and the replay stops where it does"
            )

    def _commit_one(self, report: StepReport, index: int, at: float, complete: bool = True) -> None:
        """Commit one step, `index`-th in the team's order, at `at`; a commit that fails stops the run."""
        if report.record is not None:
            report.record.commit_index, report.record.commit_time = index, at
        outgoing = [replace(message, sent_at=at, delivered_at=at) for message in report.outgoing]
        try:
            # The team's step: its agent-steps so far, per agent (a lock-step round's count).
            self._commit([replace(report, outgoing=outgoing)], at, complete, (index + 1) / len(self._agents))
        except BaseException:
            self._stopped = True  # the others must not wait for a commit that cannot come
            raise
        finally:
            self._cond.notify_all()
        self._commits = index + 1

    def _commit_ready(self) -> None:
        """A replay's: commit the steps whose turn has come, once every step that saw the team before
        them has perceived."""
        while self._commits in self._waiting and self._to_see[self._commits] <= 0 and not self._stopped:
            self._commit_one(self._waiting.pop(self._commits), self._commits, self._times[self._commits])
        self._cond.notify_all()

    def _recorded_step(self, agent_id: str, step: int) -> RecordedCommit:
        """The step in the replayed run's commit order (read at the first step); StopRun where it is not there."""
        assert self._recorded is not None
        if self._order is None:
            self._order = self._recorded.commit_order(self._agents, self._max_steps)
            self._to_see = Counter(commit.seen_commits for commit in self._order.values())
            self._times = {commit.index: commit.committed_at for commit in self._order.values()}
        recorded = self._order.get((agent_id, step))
        if recorded is None:
            raise self._recorded.stop(f"{agent_id} takes step {step}, which the recorded run did not")
        return recorded

    def _now(self) -> float:
        """Wall seconds since the first agent perceived."""
        now = time.perf_counter()
        if self._started is None:
            self._started = now
        return clock(now - self._started)
