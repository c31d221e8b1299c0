"""What the live page (`--serve`) shows of a run as it goes, folded from the trace lines as they are committed.

It keeps what the page shows, not the lines: each member's latest step, each explorer's trail (its latest
MAX_TRAIL cells), the ground first seen, the finds, the team's discovery curve (a point where the count
changes) and the latest LIVE_MESSAGES messages. The map and the curve are the report's own charts
(explorer/report/charts.py), drawn at one moment.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from explorer.report.charts import live_line_chart, live_map, live_map_layout
from explorer.report.trace_views import (
    MAX_TRAIL,
    Record,
    StepLine,
    map_ground,
    note_sightings,
    panel_row,
    sent_by,
    when_of,
)
from perception.world import World

LIVE_MESSAGES = 200  # the messages the page lists: the latest


class LiveTeam:
    """The run as the live page shows it; `add` each committed line, `snapshot` for the page."""

    def __init__(self, members: list[str], world: World | None) -> None:
        """`world`: the mock world, whose walls, rooms and objects the map shows; None in game mode."""
        self.world = world
        self.rows: dict[str, dict[str, Any]] = {member: {"agent": member, "step": 0} for member in members}
        self.trails: dict[str, deque[tuple[int, int]]] = {}  # an explorer's; a director has no pose
        self.poses: dict[str, tuple[int, int, str]] = {}
        self.first_seen: dict[tuple[int, int], float] = {}
        self.object_cells: dict[str, tuple[int, ...]] = {}
        self.discoveries: dict[str, dict[str, Any]] = {}
        self.curve = StepLine()
        self.messages: deque[dict[str, Any]] = deque(maxlen=LIVE_MESSAGES)
        self.sent = 0  # every message so far, the page's list holding the latest
        self.dropped = 0  # committed steps the page never saw (its channel was full)
        self.ending: dict[str, Any] | None = None
        self._layout: str | None = None  # the map's layout: the world's, the same at every moment

    def add(self, record: Record) -> None:
        """One committed trace line."""
        agent, when = record["agent_id"], when_of(record)
        if agent not in self.rows:
            return
        self.rows[agent] = _row(record)
        self._move(agent, record)
        note_sightings(record, when, self.first_seen, self.object_cells)
        for name in record.get("new_objects") or ():
            self.discoveries.setdefault(name, {"finder": agent, "step": when})
        self.curve.at(when, len(self.discoveries))
        for sent in sent_by(record):
            route = f"via {sent.via} → " if sent.via else ""
            self.messages.append(
                {"step": when, "sender": sent.sender, "recipient": route + ", ".join(sent.to), "text": sent.text}
            )
            self.sent += 1

    def _move(self, agent: str, record: Record) -> None:
        """Where an explorer stands after its step, and its trail taken there."""
        pose = (record.get("result") or {}).get("pose") or record.get("pose")
        if not pose:
            return
        x, y, _ = pose["position"]
        self.poses[agent] = (x, y, pose["facing"])
        trail = self.trails.setdefault(agent, deque(maxlen=MAX_TRAIL))
        if not trail or trail[-1] != (x, y):
            trail.append((x, y))

    def end(self, status: str, report: bool) -> None:
        """The run has ended with `status`; `report`: its report.html is there to link."""
        self.ending = {"status": status, "report": report}

    def snapshot(self) -> str:
        """The page's state as JSON: the map and the curve as plotly figures, the members' rows, the messages."""
        series = {"team": self.curve.series()}
        curve = live_line_chart("Objects found", "step", "objects", series)
        state = {
            "agents": list(self.rows.values()),
            "messages": list(self.messages),
            "sent": self.sent,
            "found": list(self.discoveries),
            "dropped": self.dropped,
            "ended": self.ending,
        }
        return f'{{"map": {self._map() or "null"}, "curve": {curve}, "state": {json.dumps(state)}}}'

    def _map(self) -> str | None:
        ground = map_ground(self.world, self.first_seen, self.object_cells, self.discoveries)
        if ground is None or not (self.world or self.first_seen):  # a game run: no map
            return None
        frame = {
            "label": "now",
            "poses": self.poses,
            "trails": {agent: ([x for x, _ in t], [y for _, y in t]) for agent, t in self.trails.items()},
            "found": set(self.discoveries),
        }
        explorers = [member for member in self.rows if member in self.poses]  # in team order, as the report's
        if self._layout is None or self.world is None:
            self._layout = live_map_layout(ground)
        return f'{{"traces": {live_map(ground, frame, explorers)}, "layout": {self._layout}}}'


def _row(record: Record) -> dict[str, Any]:
    """A member's latest step: the report's panel row, with its step, action and the decision's reason."""
    decision = record.get("decision") or {}
    reason = "; ".join(str(decision[key]) for key in ("reason", "thinking") if decision.get(key))
    row = {**panel_row(record), "step": record["step"], "reason": reason}
    if record.get("directives") and not record.get("action"):  # a director: what it did is the directives it sent
        row["did"] = f"{len(record['directives'])} directives"
    return row
