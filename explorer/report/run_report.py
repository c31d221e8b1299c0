"""A run's report.html: what the team did and found, for a person, made from the run's own files.

Written at the end of every run (completed, stopped or failed) and rebuilt by
`python main.py --report RUN_DIR`. It reads only config.json, summary.json,
trace.jsonl, the world file (mock mode) and the screenshots (game mode), so a
report can be remade at any time without running anything again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from explorer.config.run_config import ConfigError
from explorer.report.charts import agent_colour, line_chart, replay_map
from explorer.report.page import write_page
from explorer.run.recover import whole_lines
from explorer.schedule.event import step_at
from perception.screenshots import thumbnail_data_uri
from perception.world import WorldError, load_world

REPORT = "report.html"
MAX_MESSAGES = 1000  # rows of the message timeline; a longer run's report says how many it left out
MAX_FRAMES = 300  # the replay's steps; a longer run's replay skips evenly between them, keeping the last


def rebuild_report(run_dir) -> Path:
    """`--report RUN_DIR`: the report of an earlier run; ConfigError where the directory holds none."""
    run_dir = Path(run_dir)
    missing = [name for name in ("config.json", "trace.jsonl", "summary.json") if not (run_dir / name).is_file()]
    if missing:
        hint = " (a killed run: write its summary with --recover first)" if missing == ["summary.json"] else ""
        raise ConfigError(f"--report: {run_dir} has no {' or '.join(missing)}{hint}")
    return write_report(run_dir)


def write_report(run_dir) -> Path:
    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    records = whole_lines(run_dir / "trace.jsonl")
    agents = [a for a in summary["agents"] if a in config.get("agent_ids", summary["agents"])]
    context = {
        "summary": summary,
        "headline": _headline(summary, config),
        "settings": _settings(config),
        "agent_rows": _agent_rows(summary),
        "colours": {agent: agent_colour(i) for i, agent in enumerate(agents)},
        "charts": _curves(records, summary, agents),
        "messages": _messages(records),
        "map": None,
        "panels": [],
        "filmstrip": [],
    }
    if config.get("mode") == "mock":
        world = _world(config, records, summary)
        frames, context["panels"] = _frames(records, agents, summary)
        context["map"] = replay_map("map", world, frames, agents) if frames else None
    else:
        context["filmstrip"] = _filmstrip(records, run_dir)
    path = run_dir / REPORT
    write_page(path, "run.html.j2", **context)
    return path


def _headline(summary, config):
    total = summary["total_objects"]
    found = len(summary["objects_discovered"])
    share = f" of {total} ({found / total:.0%})" if total else ""
    steps = max(summary["steps"].values(), default=0)
    full = summary.get("first_full_discovery_step")
    return (
        f"{len(config.get('agent_ids', []))} agents explored {summary['world']} for {steps} steps with "
        f"{summary['model']} and found {found}{share} objects"
        + (f"; the last at step {full}" if full else "")
        + (
            "."
            if summary["status"] == "completed"
            else f". The run {summary['status']}: {summary.get('error') or 'stopped'}."
        )
    )


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
                "messages": numbers["messages_sent"],
                "calls": llm["calls"],
                "tokens": llm["prompt_tokens"] + llm["completion_tokens"],
                "cost": f"${llm['cost_usd']:.4f}" if llm["cost_usd"] is not None else "-",
                "parse_failures": llm["parse_failures"],
                "errors": llm["errors"],
            }
        )
    return rows


_Series = tuple[list[float], list[int]]  # a chart's line: (the steps, the values)


def _when(record: dict[str, Any]) -> float:
    """The step a record's tick counts as on the team's clock (step k at t = k - 1)."""
    return step_at(record["time"]) if record.get("time") is not None else record["step"]


def _curves(records, summary, agents):
    """The discovery and coverage curves: per agent what it saw itself, and the team's."""
    objects: dict[str, _Series] = {agent: ([], []) for agent in agents}
    cells: dict[str, _Series] = {agent: ([], []) for agent in agents}
    seen_objects: dict[str, set[str]] = {agent: set() for agent in agents}
    seen_cells: dict[str, set[tuple[int, ...]]] = {agent: set() for agent in agents}
    team_cells: set[tuple[int, ...]] = set()
    team_curve: _Series = ([], [])
    for record in records:
        agent = record["agent_id"]
        if agent not in objects:
            continue  # a coordinator sees nothing itself
        when = _when(record)
        seen_objects[agent].update(record.get("visible_objects", ()))
        seen_cells[agent].update(map(tuple, record.get("seen_cells", ())))
        team_cells.update(map(tuple, record.get("seen_cells", ())))
        for series, count in ((objects[agent], len(seen_objects[agent])), (cells[agent], len(seen_cells[agent]))):
            series[0].append(when)
            series[1].append(count)
        if team_curve[0] and team_curve[0][-1] == when:
            team_curve[1][-1] = len(team_cells)
        else:
            team_curve[0].append(when)
            team_curve[1].append(len(team_cells))
    found = summary["discovery_curve"]
    discovery = {
        "team": ([step for step, _ in found], [n for _, n in found]),
        **{f"{agent} saw": series for agent, series in objects.items()},
    }
    coverage = {"team": team_curve, **{f"{agent} saw": series for agent, series in cells.items()}}
    charts = [line_chart("discovery", "Objects found", "step", "objects", discovery)]
    if team_cells:
        charts.append(line_chart("coverage", "Ground seen", "step", "cells", coverage))
    return charts


def _messages(records):
    """Who told whom what, and when, in the order they were sent."""
    rows = []
    for record in records:
        out = record.get("message_out")
        sent = [(out["recipient"], out["message"])] if out else []
        sent += [(d["to"], d["message"]) for d in record.get("directives") or ()]
        rows += [
            {"step": _when(record), "sender": record["agent_id"], "recipient": to, "text": text} for to, text in sent
        ]
    return {"rows": rows[:MAX_MESSAGES], "left_out": max(0, len(rows) - MAX_MESSAGES)}


def _world(config, records, summary):
    """The map's ground truth: the world file's walls and objects, with who found each and when."""
    try:
        world = load_world(config["world"])
        width, depth, walls, objects = world.width, world.depth, sorted(world.walls), world.objects
    except (WorldError, KeyError):  # moved or edited since: draw what the trace saw
        cells = [cell for r in records for cell in r.get("seen_cells", ())]
        width = max((c[0] for c in cells), default=0) + 1
        depth = max((c[1] for c in cells), default=0) + 1
        walls = []
        objects = {name: tuple(cell) for r in records for name, cell in (r.get("object_cells") or {}).items()}
    first_seen: dict[tuple[int, int], float] = {}
    for record in records:
        for x, y, *_ in record.get("seen_cells", ()):
            first_seen.setdefault((x, y), _when(record))
    discoveries = summary["discoveries"]
    return {
        "width": width,
        "depth": depth,
        "walls": walls,
        "first_seen": first_seen,
        "objects": [
            {
                "name": name,
                "x": cell[0],
                "y": cell[1],
                "level": cell[2] if len(cell) > 2 else 0,
                "finder": discoveries.get(name, {}).get("finder"),
                "step": discoveries.get(name, {}).get("step"),
            }
            for name, cell in objects.items()
        ],
    }


def _frames(records, agents, summary):
    """(map frames, panels): one per tick time, the agents where they looked from, trails and finds so far;
    each panel says what each agent saw, did and said then."""
    by_time: dict[float, list[dict[str, Any]]] = {}
    for record in records:
        by_time.setdefault(_when(record), []).append(record)
    found_at = {name: found["step"] for name, found in summary["discoveries"].items()}
    trails: dict[str, tuple[list[int], list[int]]] = {agent: ([], []) for agent in agents}  # (xs, ys)
    latest = {}
    frames, panels = [], []
    for when in sorted(by_time):
        for record in by_time[when]:
            if record["agent_id"] in trails and record.get("pose"):
                latest[record["agent_id"]] = record
        poses = {}
        for agent, record in latest.items():
            # Where it stands at this time: where it looked from, or where its last step took it.
            pose = (
                record["pose"] if _when(record) == when else (record.get("result") or {}).get("pose") or record["pose"]
            )
            x, y, _ = pose["position"]
            poses[agent] = (x, y, pose["facing"])
            xs, ys = trails[agent]
            if not xs or (xs[-1], ys[-1]) != (x, y):
                xs.append(x)
                ys.append(y)
        label = f"{when:g}"
        frames.append(
            {
                "label": label,
                "poses": poses,
                "trails": {a: (list(xs), list(ys)) for a, (xs, ys) in trails.items()},
                "found": {name for name, step in found_at.items() if step is not None and step <= when},
            }
        )
        panels.append({"label": label, "rows": [_panel_row(record) for record in by_time[when]]})
    if len(frames) > MAX_FRAMES:
        kept = sorted({round(i * (len(frames) - 1) / (MAX_FRAMES - 1)) for i in range(MAX_FRAMES)})
        frames, panels = [frames[i] for i in kept], [panels[i] for i in kept]
    return frames, panels


def _panel_row(record):
    result = record.get("result") or {}
    out = record.get("message_out")
    said = [f"to {out['recipient']}: {out['message']}"] if out else []
    said += [f"to {d['to']}: {d['message']}" for d in record.get("directives") or ()]
    pose = record.get("pose")
    return {
        "agent": record["agent_id"],
        "pose": f"({', '.join(map(str, pose['position']))}) {pose['facing']}" if pose else "",
        "saw": ", ".join(record.get("visible_objects") or ()) or record.get("visible_caption", ""),
        "did": f"{record['action']}: {result.get('outcome', '')}" if record.get("action") else "",
        "said": " | ".join(said),
        "new": ", ".join(record.get("new_objects") or ()),
    }


def _filmstrip(records, run_dir):
    """Game mode: each step's screenshot with its caption, objects, decision and dead-reckoned position,
    and the frames just before and after its action, with what the comparison made of them."""
    frames = []
    for record in records:
        decision = record.get("decision") or {}
        result = record.get("result") or {}
        pose = result.get("pose") or record.get("pose")
        action_frames = result.get("frames") or {}
        change = result.get("view_change")
        frames.append(
            {
                "agent": record["agent_id"],
                "step": record["step"],
                "image": _thumbnail(run_dir, record.get("image_path"), 320),
                "caption": record.get("visible_caption", ""),
                "objects": ", ".join(record.get("visible_objects") or ()),
                "action": record.get("action") or "",
                "reason": decision.get("reason", ""),
                "outcome": result.get("outcome", ""),
                "view_change": f"{change:.1%} of the view changed" if change is not None else "",
                "before": _thumbnail(run_dir, action_frames.get("before"), 160),
                "after": _thumbnail(run_dir, action_frames.get("after"), 160),
                "pose": f"({', '.join(map(str, pose['position']))}) facing {pose['facing']}" if pose else "",
            }
        )
    return frames


def _thumbnail(run_dir, image, width):
    """A data: URI of the screenshot a trace names (relative to the run directory or absolute), if it is there."""
    if not image:
        return None
    path = Path(image)
    path = path if path.is_absolute() else run_dir / path
    return thumbnail_data_uri(path, width) if path.is_file() else None
