"""A run's report.html: what the team did and found, for a person, made from the run's own files.

Written at the end of every run (completed, stopped or failed) and rebuilt by
`python main.py --report RUN_DIR`. It reads only config.json, summary.json,
trace.jsonl, the world file (mock mode) and the screenshots (game mode), so a
report can be remade at any time without running anything again. The trace is
read once, line by line, into views that keep only what the page shows
(explorer/report/trace_views.py): however long the run, the report's memory stays flat.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.records.errors import ConfigError
from explorer.records.run_files import RUN_CONFIG, RUN_SUMMARY, TraceLines, read_run_json, world_of
from explorer.records.shapes import list_of, number
from explorer.records.summary import CELL_SHARES, RUNNING
from explorer.report.charts import agent_colour, replay_map
from explorer.report.decisions import Decisions
from explorer.report.page import write_page
from explorer.report.trace_views import Curves, Filmstrip, Messages, Replay
from explorer.schedule.catalogue import SCHEDULES

REPORT = "report.html"
_SECONDS_CURVE = list_of(list_of(number, 3, 3))  # the summary's [seconds, objects found, cells seen]


@dataclass(frozen=True)
class WrittenReport:
    """The report written, and what the console should warn of (damaged trace lines skipped)."""

    path: Path
    warnings: list[str] = field(default_factory=list)


def rebuild_report(run_dir: Path) -> WrittenReport:
    """`--report RUN_DIR`: the report of an earlier run; ConfigError where the directory holds none."""
    run_dir = Path(run_dir)
    missing = [name for name in ("config.json", "trace.jsonl", "summary.json") if not (run_dir / name).exists()]
    if missing:
        hint = " (a killed run: write its summary with --recover first)" if missing == ["summary.json"] else ""
        raise ConfigError(f"--report: {run_dir} has no {' or '.join(missing)}{hint}")
    return write_report(run_dir)


def write_report(run_dir: Path, summary: dict[str, Any] | None = None, notes: Sequence[str] = ()) -> WrittenReport:
    """Write the run's report.html, of `summary` (by default its summary.json's), with `notes` first among the
    page's; ConfigError (or FileProblem, for a screenshot) where a file of the run cannot be read or is not what
    it should be."""
    run_dir = Path(run_dir)
    config = read_run_json(run_dir / "config.json", RUN_CONFIG, "a run's settings")
    if summary is None:
        summary = read_run_json(run_dir / "summary.json", RUN_SUMMARY, "a run's summary")
    agents = [a for a in summary["agents"] if a in config.get("agent_ids", summary["agents"])]
    mock = config.get("mode") == "mock"
    world = world_of(config, run_dir / "config.json") if mock else None  # refused before the trace is read
    trace = TraceLines(run_dir / "trace.jsonl", members=set(summary["agents"]))
    kind = SCHEDULES.get(config.get("schedule", ""))  # a run directory from elsewhere may name none we know
    clock = kind.clock if kind else None
    curves, messages, decisions = Curves(agents, clock), Messages(), Decisions(summary["agents"], clock is not None)
    replay, filmstrip = Replay(agents, summary["discoveries"]), Filmstrip(run_dir)
    for record in trace:
        curves.add(record)
        messages.add(record)
        decisions.add(record)
        (replay if mock else filmstrip).add(record)
    context: dict[str, Any] = {
        "summary": summary,
        "headline": _headline(summary, config),
        "settings": _settings(config),
        "agent_rows": _agent_rows(summary),
        "team_figures": _team_figures(summary),
        "colours": {agent: agent_colour(i) for i, agent in enumerate(agents)},
        "charts": curves.charts(summary["discovery_curve"], _seconds_curve(summary)),
        "messages": messages.page(),
        "decisions": decisions.members,
        "map": None,
        "rooms": False,  # the map outlines the world's rooms
        "panels": [],
        "filmstrip": filmstrip.pictures.kept(),
    }
    if mock:
        frames, context["panels"] = replay.finish()
        ground = replay.world(world, summary["discoveries"])
        context["map"] = replay_map("map", ground, frames, agents) if frames and ground else None
        context["rooms"] = bool(context["map"] and ground and ground["rooms"])
    page_notes = [
        *notes,
        trace.note(),
        replay.frames.note("The replay", "steps"),
        filmstrip.pictures.note("The filmstrip", "agent-steps"),
        decisions.note(),
        _late_actions_note(summary),
    ]
    path = run_dir / REPORT
    write_page(path, "run.html.j2", notes=[note for note in page_notes if note], **context)
    return WrittenReport(path, [note] if (note := trace.note()) else [])


def _headline(summary, config):
    total = summary["total_objects"]
    found = len(summary["objects_discovered"])
    share = f" of {total} ({found / total:.0%})" if total else ""
    steps = max(summary["steps"].values(), default=0)
    full = summary.get("first_full_discovery_step")
    if summary["status"] == RUNNING:
        ending = ". The run is still going."
    elif summary["status"] == "completed":
        ending = "."
    else:
        ending = f". The run {summary['status']}: {summary.get('error') or 'stopped'}."
    return (
        f"{len(config.get('agent_ids', []))} agents explored {summary['world']} for {steps} steps with "
        f"{summary['model']} and found {found}{share} objects" + (f"; the last at step {full}" if full else "") + ending
    )


def _seconds_curve(summary: dict[str, Any]) -> list[list[float]] | None:
    """The team's counts on the run's clock, as the summary has them; None where it has none (an older
    run's summary) or they are not what they should be."""
    team = summary.get("team")
    curve = team.get("seconds_curve") if isinstance(team, dict) else None
    return curve if _SECONDS_CURVE(curve) else None


def _settings(config):
    return [
        (key, json.dumps(value) if isinstance(value, (list, dict)) else str(value))
        for key, value in config.items()
        if key != "agent_profiles"
    ]


def _agent_rows(summary):
    rows = []
    for agent, numbers in summary["per_agent"].items():
        llm = numbers["llm"]
        rows.append(
            {
                "agent": agent,
                "policy": numbers["policy"] or "",
                "steps": numbers["steps"],
                "finds": ", ".join(numbers["found_first"]) or "-",
                "found_first": len(numbers["found_first"]),
                "distance": _shown(numbers.get("distance")),
                "first_seen": _share(numbers.get("first_seen_share")),
                "messages": numbers["messages_sent"],
                "calls": llm["calls"],
                "tokens": llm["prompt_tokens"] + llm["completion_tokens"],
                "cost": f"${llm['cost_usd']:.4f}" if llm["cost_usd"] is not None else "-",
                "parse_failures": llm["parse_failures"],
                "errors": llm["errors"],
            }
        )
    return rows


def _team_figures(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The team's figures as the field reports them, a (what, value) row each: the distance it travelled, the
    steps and distance to shares of the cells, and a search task's SPL; none a summary does not have (an older
    run's, a game run's)."""
    team, search = summary.get("team") or {}, summary.get("search") or {}
    rows = []
    if team.get("distance") is not None:
        rows.append(("Distance travelled (cells moved by the explorers)", _shown(team["distance"])))
    steps, walked = team.get("steps_to_cells") or {}, team.get("distance_to_cells") or {}
    for share in (f"{share}%" for share in CELL_SHARES):
        if share in steps or share in walked:
            rows.append((f"Steps, and cells moved, to {share} of the cells", _to(steps, walked, share)))
    if search.get("spl_by_target") is not None:
        rows.append(("SPL, every target (success weighted by path length)", _shown(search.get("spl"))))
        shortest, taken = search.get("shortest_path_to_target") or {}, search.get("distance_to_target") or {}
        for target, spl in search["spl_by_target"].items():
            path = f"shortest path {_shown(shortest.get(target))}, the finder's {_shown(taken.get(target))}"
            rows.append((f"SPL, {target}", f"{_shown(spl)} ({path})"))
    return rows


def _to(steps: dict[str, Any], walked: dict[str, Any], share: str) -> str:
    if steps.get(share) is None and walked.get(share) is None:
        return "not reached"
    return f"{_shown(steps.get(share))} steps, {_shown(walked.get(share))} cells moved"


def _late_actions_note(summary: dict[str, Any]) -> str | None:
    """Where actions landed after their step was recorded (an act_delay, a think time): the distance leaves
    their moves out."""
    late = (summary.get("team") or {}).get("late_actions")
    if not late:
        return None
    return f"{late:,} explorer steps' actions took effect later than their step: the distances leave their moves out."


def _shown(value: Any) -> str:
    """A figure as the page shows it: "-" where there is none."""
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
