"""The step commit: how a finished step reaches the team, the trace, the counts and the live view.

The schedules (lockstep.py, event.py) call it once per step with the reports
in agent order, and never twice at once, so the same seed commits the same
steps in the same order whatever the threads' timing; realtime.py calls it
with each step as it finishes, in an order its replay keeps.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from explorer.records.clock import step_at
from explorer.records.run_view import RunView
from explorer.records.summary import RunStats
from explorer.records.telemetry import NoTelemetry, Telemetry
from explorer.records.trace import TraceWriter
from explorer.team.store import TeamStore
from nodes.interfaces import SightReport, StepReport
from perception.base import Message
from perception.targets import missing_targets

log = logging.getLogger("explorer")


class StepCommit:
    """Applies a finished step: the team store first, then the trace, the counts and the live view.

    The schedule calls it once per step with the reports in agent order, and
    never twice at once, so it is the only writer of what it holds.
    """

    def __init__(
        self,
        store: TeamStore,
        trace: TraceWriter,
        stats: RunStats,
        view: RunView,
        coordinator: str | None,
        process_started: float,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.store, self.trace, self.stats, self.view = store, trace, stats, view
        self.telemetry = telemetry or NoTelemetry()  # --telemetry: each committed line as spans too
        self.coordinator = coordinator  # its id, where there is one: the explorers' reports go to it
        self.process_started = process_started
        # Seconds from the process's start until the first step began, and until every agent had finished it.
        self.startup: dict[str, float | None] = {"first_step_started_seconds": None, "first_step_done_seconds": None}
        self._all_found: tuple[int, Callable[[], None]] | None = None  # --stop-when all-found: (objects, then)
        self._targets_found: tuple[tuple[str, ...], Callable[[], None]] | None = None  # a search task: (targets, then)

    def when_all_found(self, total: int, then: Callable[[], None]) -> None:
        """Call `then` once, as soon as a committed step brings the team's finds to all `total` objects."""
        self._all_found = (total, then)

    def when_targets_found(self, targets: tuple[str, ...], then: Callable[[], None]) -> None:
        """Call `then` once, as soon as a committed step brings the team's finds to every one of `targets`."""
        self._targets_found = (targets, then)

    def first_step_begins(self) -> float:
        """Note that the first step begins now (for the summary's start-up times); now, as perf_counter."""
        began = time.perf_counter()
        self.startup["first_step_started_seconds"] = round(began - self.process_started, 3)
        return began

    def __call__(self, reports: list[StepReport], at: float, complete: bool = True, step: float | None = None) -> None:
        """Commit the ticks at time `at` (a lock-step round r is at r - 1); `complete` is False for
        what a stopped run had handed in; `step` is the team's step where it is not the tick's."""
        began = time.perf_counter()
        committed = self.store.commit_step(reports)
        self.stats.commit_seconds.append(time.perf_counter() - began)
        lines = [self._record(report, new_objects) for report, new_objects in zip(reports, committed)]
        team_found = list(self.stats.discoveries)
        if complete:
            # The team's curves count time as steps of an agent ticking once a second, and in seconds.
            self.stats.step_completed(step_at(at) if step is None else step, len(team_found), at)
            if self.startup["first_step_done_seconds"] is None:
                self.startup["first_step_done_seconds"] = round(time.perf_counter() - self.process_started, 3)
            if self._all_found and len(team_found) >= self._all_found[0]:
                log.info("Every object is found: the run ends (--stop-when all-found)")
                self.stats.all_found_stop = self.stats.discovery_curve[-1][0]
                then = self._all_found[1]
                self._all_found = None
                then()
            if self._targets_found and not missing_targets(self._targets_found[0], team_found):
                log.info("Every target is found: the run ends (a search task)")
                self.stats.targets_found_stop = self.stats.discovery_curve[-1][0]
                then = self._targets_found[1]
                self._targets_found = None
                then()
        # The live view's progress counts the team's steps: under realtime, one per agent-step of each agent.
        self.view.step_committed(lines, team_found, complete and (step is None or step == int(step)))

    def _record(self, report: StepReport, new_objects: list[str]) -> dict:
        """One agent's committed step into the log, the trace, its memory and the counts; its trace line."""
        for message in report.outgoing:
            log.info("%s -> %s: %s", report.agent_id, message.recipient, message.message)
        for name in new_objects:
            log.info("%s found %s at step %d", report.agent_id, name, report.step)
        record = report.record
        assert record is not None  # only the stores' and schedules' own tests hand in bare steps
        record.new_objects = new_objects
        self.stats.delivered(len(report.outgoing))  # lock-step delivers a step's messages as it commits it
        line = record.to_dict()
        self.trace.write(line)
        self.telemetry.step(line, record.laps_ended)
        report.remember()  # after the trace line: a step is in both, or in neither
        if report.upward:
            self.deliver(report.upward)
        self.stats.add(line)
        if line["result"]:  # a coordinator's tick has none
            log.debug("%s step %d: %s -> %s", report.agent_id, report.step, line["action"], line["result"]["outcome"])
        return line

    def deliver(self, sent: Message | SightReport) -> None:
        """A message reaches its mailbox, or a report its coordinator's inbox (on the clock, when
        the sender's msg_delay has passed)."""
        if isinstance(sent, SightReport):
            assert self.coordinator is not None  # explorers report upward only to a team's coordinator
            self.store.send_report(self.coordinator, sent)
            return
        log.info("%s -> %s: %s", sent.sender, sent.recipient, sent.message)
        self.store.send_message(sent)
        self.stats.delivered()
