"""What a run found and what it cost, gathered as steps are committed."""

from __future__ import annotations

from collections import Counter


class RunStats:
    """Per-agent counts, added to in agent order as each step is committed."""

    COUNTERS = ("calls", "prompt_tokens", "completion_tokens", "parse_failures", "errors", "messages_sent")

    def __init__(self, agent_ids):
        self.steps = {agent_id: 0 for agent_id in agent_ids}
        self.per_agent = {agent_id: Counter() for agent_id in agent_ids}
        self.found_first = {agent_id: [] for agent_id in agent_ids}
        self.discovery_curve: list[list[int]] = []

    def add(self, record):
        agent_id = record["agent_id"]
        counts = self.per_agent[agent_id]
        llm = record.get("llm") or {}
        self.steps[agent_id] = record["step"]
        counts["calls"] += llm.get("calls", 0)
        counts["prompt_tokens"] += llm.get("prompt_tokens", 0)
        counts["completion_tokens"] += llm.get("completion_tokens", 0)
        counts["parse_failures"] += bool(record.get("parse_failure"))
        counts["errors"] += len(record.get("errors", []))
        counts["messages_sent"] += record.get("message_out") is not None
        self.found_first[agent_id].extend(record.get("new_objects", []))

    def step_completed(self, step, discovered):
        self.discovery_curve.append([step, discovered])

    def llm_totals(self):
        totals = Counter()
        for counts in self.per_agent.values():
            totals.update(counts)
        return {key: totals[key] for key in self.COUNTERS if key != "messages_sent"}


def build_summary(config, environment, store, stats, wall_seconds, status, error=None):
    discovered = sorted(store.objects())
    total = environment.total_objects
    full_step = None
    if total:
        full_step = next((step for step, found in stats.discovery_curve if found >= total), None)
    return {
        "status": status,  # completed, interrupted or failed
        "error": error,
        "mode": config.mode,
        "world": environment.name,
        "world_file": str(config.world) if config.mode == "mock" else None,
        "seed": config.seed,
        "model": config.model,
        "comm": config.comm,
        "agents": list(stats.steps),
        "steps": dict(stats.steps),
        "objects_discovered": discovered,
        "total_objects": total,
        "coverage": round(len(discovered) / total, 4) if total else None,
        "first_full_discovery_step": full_step,
        "discovery_curve": stats.discovery_curve,
        "discoveries": store.discoveries(),
        "messages_sent": len(store.history()),
        "message_errors": store.errors(),
        "llm": stats.llm_totals(),
        "per_agent": {
            agent_id: {
                "steps": stats.steps[agent_id],
                "found_first": stats.found_first[agent_id],
                **{key: stats.per_agent[agent_id][key] for key in RunStats.COUNTERS},
            }
            for agent_id in stats.steps
        },
        "wall_seconds": round(wall_seconds, 3),
    }
