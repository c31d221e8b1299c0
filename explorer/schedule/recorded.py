"""What a replay's schedule takes from the recorded run's trace (--replay-replies): each step's clock.

A replay answers each model call from the trace (explorer/model/replay.py). Where the schedule's clock
moved with the calls themselves, that is not enough, so the replay takes the clock from the trace too:
`think_time: measured` (--schedule event) moved it by each decision's latency, and --schedule realtime
committed the steps in the order they finished, each having seen the commits before it perceived.
Read once, at the first step that needs it; a trace that cannot answer stops the run as the user's
mistake, in one line, as a reply that cannot be replayed does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.records.shapes import at_least, count, nullable, record, text
from nodes.interfaces import StopRun

# What a replay reads of a trace line: who, which step, and the schedule's fields (nodes/record.py).
STEP_CLOCK = record(
    {"agent_id": text, "step": count},
    {
        "time": nullable(at_least(0)),
        "think_time": nullable(at_least(0)),
        "commit_index": nullable(count),
        "commit_time": nullable(at_least(0)),
        "seen_commits": nullable(count),
    },
)


@dataclass(frozen=True)
class RecordedStep:
    """One step's clock in the recorded run: when it perceived, how long it thought and, under --schedule
    realtime, where it came in the team's commit order, when, and how many commits its view held."""

    time: float | None
    think_time: float | None
    commit_index: int | None
    commit_time: float | None
    seen_commits: int | None


@dataclass(frozen=True)
class RecordedCommit:
    """A step of a run under --schedule realtime: when it perceived, having seen `seen_commits` of the team's
    commits, and its place in the commit order, committed at `committed_at`."""

    time: float
    index: int
    committed_at: float
    seen_commits: int


class RecordedClock:
    """The recorded run's steps, by (agent_id, step), read from its trace when first asked."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._lock = threading.Lock()
        self._steps: dict[tuple[str, int], RecordedStep] | None = None

    def steps(self) -> dict[tuple[str, int], RecordedStep]:
        """Every recorded step; raises StopRun where the trace cannot be read."""
        with self._lock:
            if self._steps is None:
                self._steps = self._read()
            return self._steps

    def think_time(self, agent_id: str, step: int) -> float:
        """The seconds the recorded step's decision took on the clock; StopRun where it has none."""
        recorded = self.steps().get((agent_id, step))
        if recorded is None or recorded.think_time is None:
            raise self.stop(
                f"{agent_id}'s step {step} has no think time on record: the recorded run did not run it "
                "under think_time: measured"
            )
        return recorded.think_time

    def commit_order(self, team: Sequence[str], max_steps: int) -> dict[tuple[str, int], RecordedCommit]:
        """Every recorded step of a run under --schedule realtime, with its place in the commit order;
        StopRun for a trace of another schedule's run, or an order this team, taking at most `max_steps`
        steps each, could not have committed (a replay must never wait for a commit that cannot come)."""
        commits = {}
        for key, step in self.steps().items():
            if step.time is None or step.commit_index is None or step.commit_time is None or step.seen_commits is None:
                raise self.stop(
                    "the recorded run did not run under --schedule realtime (its trace keeps no commit order): "
                    "replay it under the schedule it ran with"
                )
            commits[key] = RecordedCommit(step.time, step.commit_index, step.commit_time, step.seen_commits)
        if sorted(commit.index for commit in commits.values()) != list(range(len(commits))):
            raise self.stop("its trace's commit order has a gap or a repeat: it is not a whole run's trace")
        for (agent_id, number), commit in sorted(commits.items(), key=lambda item: item[1].index):
            problem = _out_of_order(agent_id, number, commit, commits.get((agent_id, number - 1)), team, max_steps)
            if problem:
                raise self.stop(f"{problem}: no run commits its steps so")
        return commits

    def stop(self, problem: str) -> StopRun:
        return StopRun(f"--replay-replies {self.run_dir}: {problem}", users_mistake=True)

    def _read(self) -> dict[tuple[str, int], RecordedStep]:
        trace = TraceLines(self.run_dir / "trace.jsonl", shape=STEP_CLOCK)
        steps = {}
        try:
            for line in trace:
                steps[(line["agent_id"], line["step"])] = RecordedStep(
                    line.get("time"),
                    line.get("think_time"),
                    line.get("commit_index"),
                    line.get("commit_time"),
                    line.get("seen_commits"),
                )
        except ConfigError as error:
            raise self.stop(str(error)) from None
        if trace.skipped:
            raise self.stop(f"{trace.path}: line {trace.first_skipped} is damaged, and a replay needs every step")
        return steps


def _out_of_order(
    agent_id: str,
    step: int,
    commit: RecordedCommit,
    before: RecordedCommit | None,
    team: Sequence[str],
    max_steps: int,
) -> str | None:
    """What makes an agent's recorded step impossible in a realtime run of `team` (its step before it, `before`,
    where recorded), or None: a step waits for the commits it saw, and perceives after its own last commit."""
    named = f"{agent_id}'s step {step}"
    if agent_id not in team:
        return f"its trace has {named}, and {agent_id} is not on this run's team"
    if step > max_steps:
        return f"its trace has {named}, past this run's {max_steps} steps"
    if commit.seen_commits > commit.index:
        return f"{named} saw {commit.seen_commits} commits, but only {commit.index} come before it"
    if step > 1 and before is None:
        return f"its trace has {named}, but not step {step - 1}"
    if before is not None and commit.seen_commits <= before.index:
        return f"{named} saw {commit.seen_commits} commits, so not its own step {step - 1}, commit {before.index + 1}"
    return None
