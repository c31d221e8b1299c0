"""How long a decision takes on the simulated clock: a profile's think_time (--schedule event).

A number is that many seconds, every decision. `measured` is the decision's own: the latency of the
model calls it made, as the trace records them; a step that asked no model (a built-in policy's, a
planner's) took its Decision node's measured time. A replay (--replay-replies) takes each step's from
the recorded trace instead, since its calls take no time: so it gives the recorded run again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from explorer.schedule.timed_perception import MEASURED, Timing
from nodes.interfaces import StepReport
from nodes.record import StepRecord

DECIDING_NODES = ("decision", "direct")  # an explorer's, a coordinator's: where a built-in policy thinks


class RecordedThinking(Protocol):
    """The replayed run's think times (explorer/schedule/recorded.py's RecordedClock)."""

    def think_time(self, agent_id: str, step: int) -> float:
        """The recorded step's; StopRun where it has none."""
        ...


class ThinkTimes:
    """Each member's think time per step, from its timing."""

    def __init__(self, timings: Mapping[str, Timing], recorded: RecordedThinking | None = None) -> None:
        """`recorded`: the replayed run's clock, where this run is a replay."""
        self.timings = timings
        self.recorded = recorded

    def of(self, report: StepReport) -> float | None:
        """The simulated seconds the step's decision took; None for a member whose decisions take none.
        Raises StopRun where a replay's record has none."""
        setting = self.timings[report.agent_id].think_time
        if setting == 0:
            return None
        if setting != MEASURED:
            return float(setting)
        if self.recorded is not None:
            return self.recorded.think_time(report.agent_id, report.step)
        return measured_seconds(report.record) if report.record is not None else 0.0


def measured_seconds(record: StepRecord) -> float:
    """What the step's decision took: its model calls' latency, or where it made none its own time."""
    latencies = [call.latency for call in record.model_calls if call.purpose != "vision"]
    if latencies:
        return sum(latencies)
    return next((record.timings[node] for node in DECIDING_NODES if node in record.timings), 0.0)
