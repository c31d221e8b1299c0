"""Recovering a run that was killed (SIGKILL, a power cut) from what it flushed: its trace.

`python main.py --recover RUN_DIR` rebuilds `summary.json` from `trace.jsonl`
and `config.json`; `--resume-memory RUN_DIR` rebuilds each agent's memory
from the trace's memory texts when the saved memories are missing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from explorer.config.run_config import COORDINATOR, ConfigError, RunConfig
from explorer.run.summary import RunStats, build_summary
from explorer.run.trace import write_json
from explorer.run.trace_versions import TraceVersionError, current_line
from explorer.schedule.event import clock, step_at, ticks_before
from memory.vector_memory import VectorMemory
from perception.base import EnvironmentInfo, Message
from perception.world import WorldError, load_world

# What a run from before an option existed ran with, where that is not RunConfig's default: torch was the only
# embedder before --embedder.
BEFORE_THEIR_OPTIONS = {"embedder": "torch"}


def whole_lines(path: Path) -> list[dict[str, Any]]:
    """The trace's records, each as this version writes it (an older trace's are converted); a last line
    the kill cut short is left out. ConfigError for a trace of a version this program cannot read."""
    records = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break  # only the last line can be cut: lines are written whole, one at a time
            try:
                records.append(current_line(record))
            except TraceVersionError as error:
                raise ConfigError(f"{path}: {error}") from None
    return records


def recover_summary(run_dir) -> dict:
    """Rebuild and write `summary.json` of a run that has none; ConfigError if it cannot be done."""
    if (run_dir / "summary.json").exists():
        raise ConfigError(f"{run_dir} already has its summary.json; --recover is for a run that was killed")
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
        records = whole_lines(run_dir / "trace.jsonl")
    except ConfigError:
        raise
    except (OSError, ValueError) as error:
        raise ConfigError(f"{run_dir} holds no run to recover: {getattr(error, 'strerror', None) or error}") from None
    if not isinstance(config, dict) or "agent_ids" not in config:
        raise ConfigError(f"{run_dir / 'config.json'} is not a run's settings")
    agent_ids = config["agent_ids"]  # the explorers; a coordinator is on record as one more member
    profiles = config.get("agent_profiles") or {}
    coordinator = COORDINATOR if config.get("coordinator") else None
    stats = RunStats(agent_ids + ([coordinator] if coordinator else []), coordinator)
    # The ticks at one time (a lock-step round r is at t = r - 1; older traces have only steps).
    by_round = defaultdict(list)
    for record in records:
        by_round[record["step"] - 1 if record.get("time") is None else record["time"]].append(record)
    lockstep = config.get("schedule", "lockstep") == "lockstep"

    def arrives(record):
        """Whether its messages reached their mailboxes before the run's end (on the clock, msg_delay)."""
        delay = (profiles.get(record["agent_id"]) or {}).get("msg_delay", 0.0)
        return record.get("time") is None or clock(record["time"] + delay) < config["steps"]

    for key in sorted(by_round):
        # The trace holds each round's lines in commit order: replaying them rebuilds what the team found.
        for record in by_round[key]:
            stats.add(record)
            if arrives(record):
                stats.delivered(len(_messages(record)))
        # A stopped run's last round may be partial: lock-step has every explorer in every round.
        if not lockstep or len({r["agent_id"] for r in by_round[key]} & set(agent_ids)) == len(agent_ids):
            stats.step_completed(step_at(key), len(stats.discoveries))
    finished = all(
        stats.steps[a] == ticks_before(config["steps"], (profiles.get(a) or {}).get("tick_interval", 1.0))
        for a in agent_ids
    )
    summary = build_summary(
        RunConfig.from_dict(config, **BEFORE_THEIR_OPTIONS),
        _environment(config),
        stats,
        wall_seconds=0.0,
        status="completed" if finished else "interrupted",
        profiles=profiles or None,
        never_delivered=sum(len(_messages(r)) for r in records if not arrives(r)),
    )
    summary["recovered_from_trace"] = True  # wall time, start-up and commit times were not on record
    summary["wall_seconds"] = None
    summary["store"]["commit_ms"] = None
    write_json(run_dir / "summary.json", summary)
    return summary


def rebuild_memories(run_dir, agent_ids, embedder):
    """{agent_id: VectorMemory} from the memory texts in the run's trace, re-embedded; {} without a trace."""
    path = run_dir / "trace.jsonl"
    if not path.is_file():
        return {}
    texts = defaultdict(list)
    for record in whole_lines(path):
        if record.get("agent_id") in agent_ids and record.get("memory_text"):
            texts[record["agent_id"]].append(record["memory_text"])
    memories = {}
    for agent_id, agent_texts in texts.items():
        memory = VectorMemory(embedder)
        memory.add_many(agent_texts, embedder.encode(agent_texts))
        memories[agent_id] = memory
    return memories


def _messages(record):
    """The messages a step sent: its own, or a coordinator's directives."""
    agent_id, step, out = record["agent_id"], record["step"], record.get("message_out")
    outgoing = [Message(agent_id, out["recipient"], out["message"], step)] if out else []
    return outgoing + [Message(agent_id, d["to"], d["message"], step) for d in record.get("directives") or ()]


def _environment(config):
    if config.get("mode") != "mock":
        return EnvironmentInfo(name=", ".join(config.get("window_titles") or []) or "game window")
    try:
        world = load_world(config["world"])
    except WorldError:
        return EnvironmentInfo(name=config["world"])
    return EnvironmentInfo(name=world.name, total_objects=len(world.objects), total_cells=world.free_cell_count)
