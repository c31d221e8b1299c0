"""What a run found and what it cost, gathered as steps are committed."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.records.trace import BUDGET
from memory.embedder import MODEL_NAME
from nodes.interfaces import DIRECTIVE, FALLBACK, PLANNER
from perception.base import EnvironmentInfo
from perception.sight_paths import target_path_lengths
from perception.targets import first_finds, is_target_object
from perception.world import World

BUDGET_EXHAUSTED = "budget_exhausted"  # a run's status once a budget ran out and it stopped cleanly
FINISHED = ("completed", BUDGET_EXHAUSTED)  # the statuses of runs that ran to their end: their figures stand
RUNNING = "running"  # the status of a summary made of a run still going, for its partial report; never written
THRESHOLDS = (50, 90, 99, 100)  # percent of the objects, and of the cells, the team has seen
CELL_SHARES = (50, 90, 99)  # the shares of the cells the field reports steps and distance to (a sweep's columns)
MOVED, PENDING = "moved", "pending"  # an action's outcomes: a cell moved; to land later (an act_delay, a think time)


@dataclass(frozen=True)
class SummarySettings:
    """What a summary records of the options its run ran with. Built above this floor, from the run's options
    (explorer/run/run_records.py's `summary_settings`), so that the summary reads no option it does not name here."""

    mode: str
    world: Path  # the world file, recorded in mock mode
    seed: int
    random_starts: bool
    stop_when: str
    model: str
    comm: bool  # agents message each other at all
    decide: str
    fallback: str
    schedule: str
    wall_clock: bool  # steps committed as they finish (--schedule realtime): the summary has a realtime block
    embedder: str
    max_cost: float | None
    max_calls: int | None
    max_tokens: int | None
    store: str | None  # a Redis store's URL; None for the in-process store
    run_id: str | None


class RunStats:
    """Per-agent counts, added to in agent order as each step is committed."""

    # Model-call totals; decisions and messages are counted beside them.
    # `calls` counts every call, replayed ones too (--replay-replies): `replayed_calls` says how many those were.
    LLM_COUNTERS = (
        "calls",
        "failed_calls",
        "replayed_calls",
        "prompt_tokens",
        "completion_tokens",
        "retries",
        "parse_failures",
        "errors",
        "json_calls",  # requests under a JSON schema (--reply-format), and the rest
        "yaml_calls",
        "budget_refused",  # calls a spent budget stopped before their request: not among `calls`
        "echoed_fields",  # a reply's messages and reasons left out for giving back the prompt's instructions
    )

    def __init__(self, agent_ids, coordinator=None, directors=None):
        self.coordinator = coordinator  # its id, where there is one: its ticks are not agent-steps
        # Every member that directs (the coordinators, the system agent): their ticks are not agent-steps either.
        self.directors = set(directors or ([coordinator] if coordinator else []))
        self.steps = dict.fromkeys(agent_ids, 0)
        self.per_agent: dict[str, Counter[str]] = {agent_id: Counter() for agent_id in agent_ids}
        self.latencies: dict[str, list[float]] = {agent_id: [] for agent_id in agent_ids}
        self.costs: dict[str, list[float]] = {agent_id: [] for agent_id in agent_ids}  # known costs only
        self.found_first: dict[str, list[str]] = {agent_id: [] for agent_id in agent_ids}
        self.policies = dict.fromkeys(agent_ids)  # who decided, as the trace says
        self.discovery_curve: list[list[int]] = []
        self.seen_by: dict[tuple, set[str]] = {}  # cell -> the agents that saw it
        self.first_seen: Counter[str] = Counter()  # agent -> the cells it saw before the rest of the team
        # Distance travelled: cells moved, each a step whose action's outcome was "moved" (directors move none).
        self.distance: Counter[str] = Counter()
        self.team_distance = 0
        self._moved_since_commit = 0  # the moves of the steps not yet counted in a team step (step_completed)
        self.late_actions = 0  # explorer steps whose action was to land later: their moves are not in `distance`
        self.starts: dict[str, tuple[int, int, int]] = {}  # each explorer's cell at its first step on record
        self.find_distances: dict[str, int] = {}  # object -> cells its finder had moved before the step it found it
        # [the team's distance at the step's start, cells the team has seen], per team step as cells_curve's
        self.cells_by_distance: list[list[int]] = []
        self.cells_curve: list[list[int]] = []  # [step, cells the team has seen]
        self.messages_curve: list[list[int]] = []  # [step, messages the team has sent]
        self.clock_curve: list[list[float]] = []  # [simulated seconds, objects found, cells seen], as committed
        self.commit_times: dict[str, float] = {}  # each agent's last commit on the clock (--schedule realtime)
        self.read_after: list[float] = []  # per message read: simulated seconds (or steps) since it was sent
        self.read_late = 0  # messages read that reached the mailbox after they were sent (a msg_delay)
        self.directives_sent = 0
        self.directive_ids: dict[str, set[int]] = {}  # status -> the directives explorers ended so (or followed)
        self.directed_steps = 0  # explorer steps taken on a directive
        # What the team's store holds, as it was committed: the summary needs no store, which may be gone.
        self.discoveries: dict[str, dict] = {}  # name -> {finder, step, cell}, in discovery order
        self.objects_seen: dict[str, set[str]] = {agent_id: set() for agent_id in agent_ids}  # what each saw itself
        self.messages_delivered = 0  # each message once, a broadcast too
        self.commit_seconds: list[float] = []  # wall time of each commit's change to the team store
        self.all_found_stop: int | None = None  # the team's step at which --stop-when all-found ended the run
        self.targets_found_stop: int | None = None  # the team's step at which a search task's last target was found

    def add(self, record: dict[str, Any]) -> None:
        agent_id = record["agent_id"]
        counts = self.per_agent[agent_id]
        recorded = (record.get("llm") or {}).get("calls", [])
        calls = [call for call in recorded if call.get("error") != BUDGET]
        counts["budget_refused"] += len(recorded) - len(calls)
        self.steps[agent_id] = record["step"]
        if record["policy"] in (PLANNER, DIRECTIVE, FALLBACK):
            counts[f"{record['policy']}_steps"] += 1  # the agent's policy is its model or its own explorer
        else:
            self.policies[agent_id] = record["policy"]
        if agent_id in self.directors:
            directives = record.get("directives") or ()
            self.directives_sent += len(directives)
            counts["messages_sent"] += len(directives)  # each is a message to its explorer
            counts["message_chars"] += sum(len(d["message"]) for d in directives)
        else:
            counts["decisions"] += 1
        directive = record.get("directive")
        if directive:
            self.directive_ids.setdefault(directive["status"], set()).add(directive["id"])
            self.directive_ids.setdefault("replaced", set()).update(directive.get("replaced", ()))
            self.directed_steps += directive["status"] == "followed"
        counts["calls"] += len(calls)
        for call in calls:
            counts["failed_calls"] += call.get("error") is not None
            counts["replayed_calls"] += bool(call.get("replayed"))
            counts[f"{call.get('format', 'yaml')}_calls"] += 1  # a line of a run's own making has one
            counts["prompt_tokens"] += call["prompt_tokens"]
            counts["completion_tokens"] += call["completion_tokens"]
            counts["retries"] += call["retries"]
            counts["echoed_fields"] += len(call.get("echoed", ()))
            self.latencies[agent_id].append(call["latency"])
            if call["cost_usd"] is not None:
                self.costs[agent_id].append(call["cost_usd"])
        counts["parse_failures"] += bool(record.get("parse_failure"))
        counts["errors"] += len(record.get("errors", []))
        message = record.get("message_out")
        counts["messages_sent"] += message is not None
        counts["message_chars"] += len(message["message"]) if message else 0
        heard = record.get("messages_in", ())
        counts["messages_read"] += len(heard)  # what reaches its prompt: --comm sets how much
        counts["message_chars_read"] += sum(len(message["message"]) for message in heard)
        for message in heard:
            sent, delivered = message.get("sent_at"), message.get("delivered_at")
            if sent is not None and record.get("time") is not None:
                self.read_after.append(record["time"] - sent)
            elif message.get("step") is not None:
                self.read_after.append(record["step"] - message["step"])  # a lock-step round is a second
            self.read_late += delivered is not None and delivered > sent
        self.found_first[agent_id].extend(record.get("new_objects", []))
        for name in record.get("new_objects", ()):
            cell = (record.get("object_cells") or {}).get(name)
            self.discoveries[name] = {"finder": agent_id, "step": record["step"], "cell": list(cell) if cell else None}
            self.find_distances[name] = self.distance[agent_id]  # this step's move comes after its sight
        self.objects_seen[agent_id].update(record.get("visible_objects", ()))
        if record.get("commit_time") is not None:
            self.commit_times[agent_id] = record["commit_time"]
        self._add_ground(agent_id, record)

    def _add_ground(self, agent_id: str, record: dict[str, Any]) -> None:
        """The cells the step saw (who saw each first: the commit adds a step's records in agent order), where
        the agent started, and the cell it moved, if it did."""
        for cell in record.get("seen_cells", ()):
            seers = self.seen_by.setdefault(tuple(cell), set())
            if not seers:
                self.first_seen[agent_id] += 1
            seers.add(agent_id)
        if agent_id in self.directors:
            return  # a director's tick moves no one
        pose = record.get("pose")
        if agent_id not in self.starts and pose:
            x, y, z = pose["position"]
            self.starts[agent_id] = (int(x), int(y), int(z))
        outcome = (record.get("result") or {}).get("outcome")
        self.late_actions += outcome == PENDING
        if outcome == MOVED:
            self.distance[agent_id] += 1
            self.team_distance += 1
            self._moved_since_commit += 1

    def delivered(self, count=1):
        self.messages_delivered += count

    def totals(self, agent_ids=None):
        """The counts of some agents (all by default), added up."""
        totals: Counter[str] = Counter()
        for agent_id in self.steps if agent_ids is None else agent_ids:
            totals.update(self.per_agent[agent_id])
        return totals

    def every_call_failed(self):
        """True when the run asked a model and never got an answer it could use as one."""
        totals = self.totals()
        return totals["calls"] > 0 and totals["failed_calls"] == totals["calls"]

    def step_completed(self, step, discovered, seconds=None):
        """The team's counts once a step is committed: at `step`, and at `seconds` on the clock where known."""
        self.discovery_curve.append([step, discovered])
        self.cells_curve.append([step, len(self.seen_by)])
        # The cells seen by the step are those its poses saw, before its moves: its distance is the one before.
        self.cells_by_distance.append([self.team_distance - self._moved_since_commit, len(self.seen_by)])
        self._moved_since_commit = 0
        self.messages_curve.append([step, self.totals()["messages_sent"]])
        if seconds is not None:
            self.clock_curve.append([seconds, discovered, len(self.seen_by)])

    def coordinator_block(self):
        """What the coordinator sent, and what became of it (each directive counted once per outcome)."""
        ids = self.directive_ids
        return {
            "id": self.coordinator,
            "ticks": self.steps[self.coordinator],
            "ticks_by_member": {d: self.steps[d] for d in sorted(self.directors)},
            "directives_sent": self.directives_sent,
            "followed": len(ids.get("followed", set()) | ids.get("done", set())),  # at least a step, or at once done
            "done": len(ids.get("done", set())),
            "replaced": len(ids.get("replaced", set())),
            "unreachable": len(ids.get("unreachable", set()) | ids.get("unavailable", set())),
            "outdated": len(ids.get("outdated", set())),  # its view already seen when read, or on the way
            "steps_directed": self.directed_steps,
        }

    def team_block(self, total_objects, total_cells):
        """How the team explored, as the exploration literature reports it."""
        explorers = [agent_id for agent_id in self.steps if agent_id not in self.directors]
        agent_steps = sum(self.steps[agent_id] for agent_id in explorers)
        totals = self.totals(explorers)
        seen = len(self.seen_by)
        return {
            "cells_seen": seen,
            "total_cells": total_cells,
            "coverage_curve": [[step, round(n / total_cells, 4)] for step, n in self.cells_curve]
            if total_cells
            else None,
            # The counts by step, for a sweep's steps table (sweep/tidy.py): the share above is rounded.
            "cells_curve": self.cells_curve,
            "messages_curve": self.messages_curve,
            # Cells moved (a step whose action's outcome was "moved"), over the explorers; and the curve by it:
            # [the team's distance when each step began, the share of the cells seen by the step's end].
            "distance": self.team_distance,
            "coverage_by_distance": [[d, round(n / total_cells, 4)] for d, n in self.cells_by_distance]
            if total_cells
            else None,
            "cells_by_distance": self.cells_by_distance,
            "late_actions": self.late_actions,  # explorer steps whose action landed later: not in the distance
            "steps_to_objects": _steps_to(self.discovery_curve, total_objects),
            "steps_to_cells": _steps_to(self.cells_curve, total_cells),
            "distance_to_cells": _steps_to(self.cells_by_distance, total_cells),
            # The same on the simulated clock (lock-step's round r at r - 1; wall seconds under realtime).
            "seconds_curve": self.clock_curve,
            "seconds_to_objects": _steps_to([[t, found] for t, found, _ in self.clock_curve], total_objects),
            "seconds_to_cells": _steps_to([[t, cells] for t, _, cells in self.clock_curve], total_cells),
            # Cells seen by two agents or more, over cells seen by any: how much the team saw twice.
            "overlap_ratio": round(sum(len(a) > 1 for a in self.seen_by.values()) / seen, 4) if seen else None,
            "messages_per_agent_step": _per(totals["messages_sent"], agent_steps),
            "message_chars_per_agent_step": _per(totals["message_chars"], agent_steps),
            # The explorers' reading: messages, and their characters, in their prompts per agent-step.
            "messages_read_per_agent_step": _per(totals["messages_read"], agent_steps),
            "message_chars_read_per_agent_step": _per(totals["message_chars_read"], agent_steps),
            "model_calls_per_agent_step": _per(totals["calls"], agent_steps),
            "planner_steps_per_agent_step": _per(totals["planner_steps"], agent_steps),
            "directive_steps_per_agent_step": _per(totals["directive_steps"], agent_steps),
        }

    def realtime_block(self):
        """Under --schedule realtime: the team's agent-steps per second of its clock, and each explorer's
        seconds until its last commit, spent waiting on its model or on anything else."""
        explorers = [agent_id for agent_id in self.steps if agent_id not in self.directors]
        end = max(self.commit_times.values(), default=0.0)
        per_agent = {}
        for agent_id in explorers:
            seconds, model = self.commit_times.get(agent_id, 0.0), sum(self.latencies[agent_id], 0.0)
            per_agent[agent_id] = {
                "seconds": round(seconds, 3),
                "model_seconds": round(model, 3),
                "other_seconds": round(max(seconds - model, 0.0), 3),
            }
        agent_steps = sum(self.steps[agent_id] for agent_id in explorers)
        return {"agent_steps_per_second": round(agent_steps / end, 3) if end else None, "per_agent": per_agent}

    def messages_block(self, never_delivered):
        """How long messages took: reads count once per recipient; `never_delivered` is None where unknown."""
        lags = self.read_after
        return {
            "sent": self.totals()["messages_sent"],
            "read": len(lags),
            "read_late": self.read_late,
            "read_by_directors": self.totals(sorted(self.directors))["messages_read"],  # passed up to them
            "never_delivered": never_delivered,  # the run ended before their msg_delay had passed
            "read_after_seconds": {"mean": round(sum(lags) / len(lags), 3), "max": max(lags)} if lags else None,
        }

    def store_block(self, settings: SummarySettings) -> dict:
        """Which team store the run used, and what its commits cost (the network, for a Redis store)."""
        times = sorted(self.commit_seconds)
        return {
            "kind": "redis" if settings.store else "in-process",
            "run_id": settings.run_id,
            "commit_ms": {f"p{q}": round(_percentile(times, q) * 1000, 3) if times else None for q in (50, 90, 99)},
        }

    def llm_block(self, agent_ids=None):
        """Model-call totals for some agents (all by default): counts, cost, latency percentiles."""
        agent_ids = list(self.steps) if agent_ids is None else agent_ids
        totals = self.totals(agent_ids)
        costs = [c for agent_id in agent_ids for c in self.costs[agent_id]]
        latencies = sorted(x for agent_id in agent_ids for x in self.latencies[agent_id])
        return {
            **{key: totals[key] for key in self.LLM_COUNTERS},
            "cost_usd": round(sum(costs), 6) if costs else None,
            "latency_seconds": {f"p{q}": _percentile(latencies, q) for q in (50, 90, 99)},
        }


def _steps_to(curve, total):
    """{"50%": step, ...}: the first step (or distance, or second: the curve's x) at which the curve reached
    each share of `total` (None if never)."""
    if not total:
        return None
    return {
        f"{share}%": next((step for step, n in curve if n >= math.ceil(total * share / 100)), None)
        for share in THRESHOLDS
    }


def _per(count, agent_steps):
    return round(count / agent_steps, 4) if agent_steps else None


def _percentile(values, q):
    """Nearest-rank percentile of sorted values; None when there are none."""
    if not values:
        return None
    return values[min(len(values) - 1, max(0, -(-q * len(values) // 100) - 1))]


def build_summary(
    settings: SummarySettings,
    environment: EnvironmentInfo,
    stats: RunStats,
    wall_seconds: float,
    status: str,
    error: str | None = None,
    startup: dict | None = None,
    profiles: dict[str, dict] | None = None,
    never_delivered: int | None = None,
    budget_spent: str | None = None,
    world: World | None = None,
) -> dict:
    """`profiles` is {agent_id: its resolved profile as a dict}; `never_delivered` the messages the run ended
    before delivering (None where unknown); `budget_spent` the budget that ran out (max_calls, say), if one did;
    `world` the true world (mock mode), for a search task's shortest paths (SPL; None: not known)."""
    total = environment.total_objects
    return {
        **_run_block(settings, environment, status, error),
        "ended_by": _ended_by(status, stats),
        "budget": {"max_cost": settings.max_cost, "max_calls": settings.max_calls, "max_tokens": settings.max_tokens}
        | {"exhausted": budget_spent},
        "agents": list(stats.steps),
        "steps": dict(stats.steps),
        **_discovery_block(stats, total),
        "search": _search_block(stats, environment.targets, world),
        "messages_sent": stats.messages_delivered,
        "messages": stats.messages_block(never_delivered),
        "coordinator": stats.coordinator_block() if stats.coordinator else None,
        "team": stats.team_block(total, environment.total_cells),
        "realtime": stats.realtime_block() if settings.wall_clock else None,
        # Every step decides; model calls are only the real requests to a model.
        "decisions": stats.totals()["decisions"],
        "planner_steps": stats.totals()["planner_steps"],  # of the decisions, those walked towards a model's goal
        "fallback_steps": stats.totals()["fallback_steps"],  # those the built-in explorer made for the model
        "llm": stats.llm_block(),
        "per_agent": {
            agent_id: _agent_block(stats, agent_id, (profiles or {}).get(agent_id, {})) for agent_id in stats.steps
        },
        "store": stats.store_block(settings),
        "wall_seconds": round(wall_seconds, 3),
        # Seconds from the process's start until the first step began, and until
        # every agent had finished it (the first memory written waits for the model).
        "startup": startup,
    }


def _ended_by(status: str, stats: RunStats) -> str:
    """Why the run ended: steps (its steps spent), all-found (--stop-when all-found), targets-found (a search
    task's last target found), budget, interrupted, failed."""
    if status == "completed":
        if stats.targets_found_stop is not None:
            return "targets-found"
        return "steps" if stats.all_found_stop is None else "all-found"
    return "budget" if status == BUDGET_EXHAUSTED else status


def _run_block(settings: SummarySettings, environment: EnvironmentInfo, status: str, error: str | None) -> dict:
    """What was run: how it ended, and the settings it ran with."""
    return {
        "status": status,  # completed, budget_exhausted, interrupted or failed (or running: not in a summary.json)
        "error": error,
        "mode": settings.mode,
        "world": environment.name,
        "world_file": str(settings.world) if settings.mode == "mock" else None,
        "seed": settings.seed,
        "random_starts": settings.random_starts,
        "stop_when": settings.stop_when,
        "model": settings.model,
        "comm": settings.comm,
        "decide": settings.decide,
        "fallback": settings.fallback,
        "schedule": settings.schedule,
        "embedder": {"model": MODEL_NAME, "backend": settings.embedder},
    }


def _discovery_block(stats: RunStats, total: int | None) -> dict:
    """What the team found, and when; `total` is the world's object count (None where unknown)."""
    discovered = sorted(stats.discoveries)
    full_step = None
    if total:
        full_step = next((step for step, found in stats.discovery_curve if found >= total), None)
    return {
        "objects_discovered": discovered,
        "total_objects": total,
        "coverage": round(len(discovered) / total, 4) if total else None,
        "first_full_discovery_step": full_step,
        "discovery_curve": stats.discovery_curve,
        "discoveries": stats.discoveries,
    }


def _search_block(stats: RunStats, targets: tuple[str, ...], world: World | None) -> dict | None:
    """A search task's outcome: the targets, those found, the step each was first found at (its finder's
    step), and the step by which all were, and SPL (`_spl_block`); None without a task."""
    if not targets:
        return None
    steps = first_finds(targets, {name: found["step"] for name, found in stats.discoveries.items()})
    found = {target: step for target, step in steps.items() if step is not None}
    return {
        "targets": list(targets),
        "targets_found": list(found),
        "all_found": len(found) == len(targets),
        "steps_to_target": steps,
        "steps_to_all": max(found.values()) if len(found) == len(targets) else None,
        **_spl_block(stats, targets, world),
    }


def _spl_block(stats: RunStats, targets: tuple[str, ...], world: World | None) -> dict:
    """SPL, success weighted by path length (Anderson et al. 2018): per target S * l / max(p, l), with S 1 where
    it was found (0: SPL 0), l the shortest path in cells moved from the nearest explorer's start to the
    nearest cell from which it is in sight, on the true world (perception/sight_paths.py), and p the cells its
    finder had moved from its own start before the step it saw it. For all the targets: S 1 where every one
    was found, l the longest of their l (a lower bound on any team's), p the longest of their p. Each is 1 for
    a path as short as can be, less for a longer one; l = p = 0 (in sight from a start) is 1. None where the
    true world or the starts are not known (game mode, a world file gone since)."""
    shortest = target_path_lengths(world, stats.starts.values(), targets) if world and stats.starts else None
    if shortest is None:
        return {"spl": None, "spl_by_target": None, "shortest_path_to_target": None, "distance_to_target": None}
    taken = {target: _distance_to(stats, target) for target in targets}
    lengths = [length for length in shortest.values() if length is not None]
    paths = [path for path in taken.values() if path is not None]
    return {
        "spl": _spl(
            max(lengths) if len(lengths) == len(targets) else None, max(paths) if len(paths) == len(targets) else None
        ),
        "spl_by_target": {target: _spl(shortest[target], taken[target]) for target in targets},
        "shortest_path_to_target": shortest,
        "distance_to_target": taken,
    }


def _distance_to(stats: RunStats, target: str) -> int | None:
    """The cells the target's finder had moved before the step it first saw one of its objects; None: not found."""
    first = next((name for name in stats.discoveries if is_target_object(name, target)), None)
    return None if first is None else stats.find_distances.get(first)


def _spl(shortest: int | None, taken: int | None) -> float | None:
    """S * l / max(p, l): 0.0 where not found (`taken` None); None where no shortest path is known."""
    if taken is None:
        return 0.0
    if shortest is None:
        return None  # found, yet no path reaches it: the world is not the one the run had
    longest = max(taken, shortest)
    return round(shortest / longest, 4) if longest else 1.0


def _agent_block(stats: RunStats, agent_id: str, profile: dict[str, Any]) -> dict:
    """One agent's part of the summary; `profile` is its resolved profile as a dict ({} where none)."""
    counts = stats.per_agent[agent_id]
    return {
        "steps": stats.steps[agent_id],
        "policy": stats.policies[agent_id],
        # Its role, model, temperature and timing (tick_interval, obs_delay, act_delay, msg_delay).
        "profile": {k: v for k, v in profile.items() if k != "persona"} or None,
        "decisions": counts["decisions"],
        "planner_steps": counts["planner_steps"],
        "fallback_steps": counts["fallback_steps"],  # of the decisions, those the built-in explorer made (--fallback)
        "found_first": stats.found_first[agent_id],
        # Cells moved; the cells it saw before the rest of the team, as a share of the cells the team saw.
        "distance": None if agent_id in stats.directors else stats.distance[agent_id],
        "first_seen_share": _first_seen_share(stats, agent_id),
        "objects_seen": sorted(stats.objects_seen[agent_id]),
        "messages_sent": counts["messages_sent"],
        "llm": stats.llm_block([agent_id]),
    }


def _first_seen_share(stats: RunStats, agent_id: str) -> float | None:
    """The cells the agent saw first (the first in commit order; within one commit, in agent order) over the
    cells the team saw; None for a director, or where the team saw none."""
    seen = len(stats.seen_by)
    return round(stats.first_seen[agent_id] / seen, 4) if seen and agent_id not in stats.directors else None
