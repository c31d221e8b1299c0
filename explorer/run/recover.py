"""Recovering a run that was killed (SIGKILL, a power cut) from what it flushed: its trace.

`python main.py --recover RUN_DIR` rebuilds `summary.json` from `trace.jsonl`
and `config.json`, of a run no longer going (explorer/records/run_lock.py), with
the status its trace shows; `--report RUN_DIR` of a run still going makes a
partial report the same way; `--resume-memory RUN_DIR` rebuilds each agent's
memory from the trace's memory texts when the saved memories are missing.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from explorer.config.episode_options import ALL_FOUND
from explorer.config.run_config import RunConfig
from explorer.model.budget import Budget
from explorer.records.clock import clock, step_at
from explorer.records.errors import ConfigError
from explorer.records.run_files import RECOVERABLE_CONFIG, RECOVERABLE_LINE, TraceLines, read_run_json, world_of
from explorer.records.run_lock import run_in_use
from explorer.records.summary import BUDGET_EXHAUSTED, RUNNING, RunStats, build_summary
from explorer.records.trace import write_json
from explorer.report.run_report import WrittenReport, write_report
from explorer.run.run_dir import CLAIM
from explorer.run.run_records import summary_settings
from memory.embedder import SentenceEmbedder
from memory.vector_memory import VectorMemory
from nodes.record import RELAYED_KEPT
from perception.base import EnvironmentInfo, Message
from perception.targets import missing_targets
from perception.world import World

Sent = Callable[[dict[str, Any]], list[Message]]  # the messages a trace line's step delivered

# What a run from before an option existed ran with, where that is not RunConfig's default: torch was the only
# embedder before --embedder.
BEFORE_THEIR_OPTIONS = {"embedder": "torch"}


@dataclass(frozen=True)
class Recovered:
    """The summary rebuilt, and what the console should warn of (damaged trace lines skipped)."""

    summary: dict[str, Any]
    warnings: list[str]


def recover_summary(run_dir: Path) -> Recovered:
    """Rebuild and write `summary.json` of a run that has none and is no longer going; ConfigError if it
    cannot be done."""
    if run_in_use(run_dir):
        raise ConfigError(
            f"{run_dir} is a run still going: --recover is for a run that was killed (--report shows it so far)"
        )
    if (run_dir / "summary.json").exists():
        raise ConfigError(f"{run_dir} already has its summary.json; --recover is for a run that was killed")
    recovered = _from_trace(run_dir, running=False)
    write_json(run_dir / "summary.json", recovered.summary)
    return recovered


def report_so_far(run_dir: Path) -> WrittenReport:
    """`--report` of a run still going: its report.html from what its trace holds so far, said to be partial
    (the run writes the whole one when it ends); its summary.json is left to the run."""
    if os.path.isfile(run_dir / CLAIM) and not os.path.getsize(run_dir / CLAIM):
        raise ConfigError(f"{run_dir} is a run still starting: it has nothing to report yet")
    recovered = _from_trace(run_dir, running=True)
    steps = sum(recovered.summary["steps"].values())
    partial = (
        f"{run_dir} is a run still going: this report is partial, made of the {steps} agent-steps its trace "
        "held; the run writes its whole report when it ends"
    )
    report = write_report(run_dir, recovered.summary, [partial])
    return WrittenReport(report.path, [partial, *recovered.warnings])


def _from_trace(run_dir: Path, running: bool) -> Recovered:
    """The summary of the run in `run_dir` rebuilt from its trace and settings (of a run still going, with
    the status RUNNING); ConfigError if it cannot be done."""
    missing = [name for name in ("config.json", "trace.jsonl") if not os.path.lexists(run_dir / name)]
    if missing:
        raise ConfigError(f"{run_dir} holds no run to recover: it has no {' or '.join(missing)}")
    config = read_run_json(run_dir / "config.json", RECOVERABLE_CONFIG, "a run's settings")
    try:
        run_config = RunConfig.from_dict(config, **BEFORE_THEIR_OPTIONS)
    except (TypeError, ValueError):  # a setting of the wrong kind: a path that is a number, say
        raise ConfigError(
            f"{run_dir / 'config.json'} is not a run's settings: a setting is of the wrong kind"
        ) from None
    agent_ids = config["agent_ids"]  # the explorers; the coordinators and the system agent are on record as more
    directors = run_config.team.directors()
    members = agent_ids + directors
    trace = TraceLines(run_dir / "trace.jsonl", members, RECOVERABLE_LINE)
    records = list(trace)
    environment, world = _environment(config, run_dir / "config.json")
    stops = _Stops(run_config, environment)
    stats = RunStats(members, directors[0] if directors else None, directors)
    sent = partial(_messages, up=run_config.team.topology.through_directors)
    if run_config.timing.schedule_kind.wall_clock:
        _replay_commits(records, len(members), stats, stops, sent)
    else:
        _replay(records, config, stats, run_config.timing.schedule_kind.rounds, stops, sent)
    profiles = config.get("agent_profiles") or {}
    finished = all(
        _ran_to_the_end(stats.steps[a], config["steps"], (profiles.get(a) or {}).get("tick_interval", 1.0))
        for a in agent_ids
    )
    budget_spent = _budget_spent(run_config, stats)
    summary = build_summary(
        summary_settings(run_config),
        environment,
        stats,
        wall_seconds=0.0,
        status=RUNNING if running else _status(finished, stats, budget_spent),
        profiles=profiles or None,
        never_delivered=sum(len(sent(r)) for r in records if not _arrives(r, config)),
        budget_spent=budget_spent,
        world=world,
    )
    summary["recovered_from_trace"] = True  # wall time, start-up and commit times were not on record
    summary["trace_lines_skipped"] = trace.skipped  # damaged lines: what they held is not counted
    summary["wall_seconds"] = None
    summary["store"]["commit_ms"] = None
    return Recovered(summary, [note for note in (trace.note(), _relays_cut(records)) if note])


class _Stops:
    """What ends a run before its steps are spent, as the run's commit watches for it (explorer/run/schedules.py):
    every object found under --stop-when all-found, every target of a search task found."""

    def __init__(self, config: RunConfig, environment: EnvironmentInfo) -> None:
        total = environment.total_objects
        self.all_found = total if config.episode.stop_when == ALL_FOUND and total else None
        self.targets = environment.targets

    def note(self, stats: RunStats) -> None:
        """After a step is committed: the team's step at which a stop was met, noted as the commit notes it."""
        step, found = stats.discovery_curve[-1][0], stats.discoveries
        if self.all_found and stats.all_found_stop is None and len(found) >= self.all_found:
            stats.all_found_stop = step
        if self.targets and stats.targets_found_stop is None and not missing_targets(self.targets, found):
            stats.targets_found_stop = step


def _budget_spent(config: RunConfig, stats: RunStats) -> str | None:
    """The budget (max_calls, say) the trace's model calls spent, if one was; None where none was, as far as the
    trace shows (it keeps each call's attempts, tokens and cost)."""
    limits = config.calls.limits()
    if not limits:
        return None
    totals, budget = stats.totals(), Budget(limits)
    cost = sum(cost for costs in stats.costs.values() for cost in costs)
    budget.charge(totals["prompt_tokens"] + totals["completion_tokens"], cost, totals["calls"] + totals["retries"])
    return budget.spent


def _status(finished: bool, stats: RunStats, budget_spent: str | None) -> str:
    """How a run that is no longer going ended, as far as its trace shows: a budget spent (a call refused for
    it, or the counts at a limit), its steps spent or its stop met (completed), else interrupted."""
    if budget_spent or stats.totals()["budget_refused"]:
        return BUDGET_EXHAUSTED  # as the run has it: a budget spent ends it, whatever else does too
    if finished or stats.all_found_stop is not None or stats.targets_found_stop is not None:
        return "completed"
    return "interrupted"


def _replay(
    records: list[dict[str, Any]], config: dict[str, Any], stats: RunStats, rounds: bool, stops: _Stops, sent: Sent
) -> None:
    """Add the trace's records to `stats` round by round, as the run committed them; `rounds`: every explorer
    takes every step (lock-step); `sent` gives the messages each record's step delivered."""
    agent_ids = config["agent_ids"]
    # The ticks at one time (a lock-step round r is at t = r - 1; older traces have only steps).
    by_round = defaultdict(list)
    for record in records:
        by_round[record["step"] - 1 if record.get("time") is None else record["time"]].append(record)
    for key in sorted(by_round):
        # The trace holds each round's lines in commit order: replaying them rebuilds what the team found.
        for record in by_round[key]:
            stats.add(record)
            if _arrives(record, config):
                stats.delivered(len(sent(record)))
        # A stopped run's last round may be partial: lock-step has every explorer in every round.
        if not rounds or len({r["agent_id"] for r in by_round[key]} & set(agent_ids)) == len(agent_ids):
            stats.step_completed(step_at(key), len(stats.discoveries), key)
            stops.note(stats)


def _replay_commits(records: list[dict[str, Any]], members: int, stats: RunStats, stops: _Stops, sent: Sent) -> None:
    """Add a realtime run's records to `stats` in its commit order, each at its commit time, as the run
    did (explorer/schedule/realtime.py): the team's step after the k-th commit is k / members."""
    for record in sorted(records, key=lambda r: r.get("commit_index", 0)):
        stats.add(record)
        stats.delivered(len(sent(record)))  # a realtime step's messages arrive as it is committed
        index = record.get("commit_index", 0)
        stats.step_completed((index + 1) / members, len(stats.discoveries), record.get("commit_time"))
        stops.note(stats)


def _arrives(record: dict[str, Any], config: dict[str, Any]) -> bool:
    """Whether its messages reached their mailboxes before the run's end: on the clock, sent once its decision
    was made (its think time after its tick, as explorer/schedule/event.py has it) and delivered msg_delay later."""
    profiles = config.get("agent_profiles") or {}
    delay = (profiles.get(record["agent_id"]) or {}).get("msg_delay", 0.0)
    if record.get("time") is None:
        return True
    decided = clock(record["time"] + (record.get("think_time") or 0.0))
    return clock(decided + delay) < config["steps"]


def _ran_to_the_end(ticks: int, end_time: float, interval: float) -> bool:
    """Whether an agent that took `ticks` ticks, the first at 0 and one every `interval`, took every tick
    before `end_time`: its last was before the end and the next would not be (worked out, not counted
    tick by tick: a config.json may give a tiny interval)."""
    return clock(ticks * interval) >= end_time and (ticks == 0 or clock((ticks - 1) * interval) < end_time)


def rebuild_memories(
    run_dir: Path, agent_ids: list[str], embedder: SentenceEmbedder
) -> tuple[dict[str, VectorMemory], TraceLines | None]:
    """({agent_id: VectorMemory} from the memory texts in the run's trace, re-embedded, and the trace read,
    for what it skipped); ({}, None) without a trace."""
    path = run_dir / "trace.jsonl"
    if not os.path.lexists(path):
        return {}, None
    texts = defaultdict(list)
    trace = TraceLines(path)
    for record in trace:
        if record["agent_id"] in agent_ids and record.get("memory_text"):
            texts[record["agent_id"]].append(record["memory_text"])
    memories = {}
    for agent_id, agent_texts in texts.items():
        memory = VectorMemory(embedder)
        memory.add_many(agent_texts, embedder.encode(agent_texts))
        memories[agent_id] = memory
    return memories, trace


def _messages(record: dict[str, Any], up: bool) -> list[Message]:
    """The messages a step sent, as the run delivered them: an explorer's own (unless `up`, --comm star and
    tree: it went up in its report, and its director passed it on), or a director's directives and what it
    passed on, once per recipient, as their first senders wrote them."""
    agent_id, step, out = record["agent_id"], record["step"], record.get("message_out")
    outgoing = [Message(agent_id, out["recipient"], out["message"], step)] if out and not up else []
    outgoing += [Message(agent_id, d["to"], d["message"], step) for d in record.get("directives") or ()]
    return outgoing + [Message(r["sender"], to, r["message"], step) for r in _relayed(record) for to in r["to"]]


def _relayed(record: dict[str, Any]) -> list[dict[str, Any]]:
    """What a director's tick passed on (none for an explorer's step, or a trace from before relays)."""
    return record.get("relayed") or []


def _relays_cut(records: list[dict[str, Any]]) -> str | None:
    """A warning where a tick passed on more than its trace line keeps (nodes/record.py's RELAYED_KEPT): the
    messages counted from the trace are then fewer than the run delivered."""
    cut = sum(
        len(relayed) >= RELAYED_KEPT or any(len(r["to"]) >= RELAYED_KEPT for r in relayed)
        for relayed in map(_relayed, records)
    )
    if not cut:
        return None
    return (
        f"a trace line keeps the first {RELAYED_KEPT} messages a tick passed on, each to its first {RELAYED_KEPT} "
        f"recipients, and {cut} of the ticks may have passed on more: the messages sent are counted from those "
        "kept, and may be fewer than the run's"
    )


def _environment(config: dict[str, Any], config_path: Path) -> tuple[EnvironmentInfo, World | None]:
    """What the run's world was, and the world itself where it is known (mock mode, its file still there)."""
    if config.get("mode") != "mock":
        return EnvironmentInfo(name=", ".join(config.get("window_titles") or []) or "game window"), None
    world = world_of(config, config_path)
    if world is None:
        return EnvironmentInfo(name=config.get("world") or "unknown world"), None
    info = EnvironmentInfo(
        name=world.name, total_objects=len(world.objects), total_cells=world.free_cell_count, targets=world.targets
    )
    return info, world
