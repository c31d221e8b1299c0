"""Steps in lock-step: agents work concurrently, the team changes only between steps.

During a step an agent only reads the team's state (and empties its own
mailbox). What it changes for the others (messages, discoveries, its
position, its trace line) it hands in. When the last agent of the step
arrives, `commit` runs once with every report in agent order, so delivery
and discovery order never depend on thread timing.
"""

from __future__ import annotations

import threading

from nodes.interfaces import RunStopped


class LockstepSchedule:
    """The `Schedule` (nodes/interfaces.py) of rounds: every agent takes step k before any takes k + 1."""

    def __init__(self, agent_ids, max_steps, commit):
        self._order = {agent_id: i for i, agent_id in enumerate(agent_ids)}
        self._max_steps = max_steps
        self._commit = commit  # called with the step's reports in agent order
        self._cond = threading.Condition()
        self._pending = {}
        self._round = 0
        self._stopped = False

    def hand_in(self, report) -> bool:
        """Hand in a finished step and wait until the whole team has finished it."""
        with self._cond:
            if self._stopped:
                raise RunStopped()
            self._pending[report.agent_id] = report
            round_ = self._round
            if len(self._pending) == len(self._order):
                self._commit_pending()
            else:
                while self._round == round_ and not self._stopped:
                    self._cond.wait()
                if self._stopped:  # its step is committed if it was handed in; no more steps
                    raise RunStopped()
        return report.step < self._max_steps

    def stop(self):
        """Stop every agent; steps already handed in are still committed."""
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            try:
                if self._pending:
                    self._commit_pending()
            finally:
                self._cond.notify_all()

    def _commit_pending(self):
        reports = [self._pending[a] for a in sorted(self._pending, key=self._order.__getitem__)]
        self._pending = {}
        self._round += 1
        try:
            self._commit(reports)
        except BaseException:
            # The others must not wait forever on a step that cannot complete.
            self._stopped = True
            raise
        finally:
            self._cond.notify_all()
