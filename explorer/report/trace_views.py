"""What the run's report shows of its trace, gathered line by line as the trace is read.

Each view keeps what it shows, not the lines: the curves a point where a count changes, the message
timeline its first MAX_MESSAGES rows, the replay and the filmstrip at most a few hundred frames, evenly
spread over the run (and its last). What the report holds so stays flat however long the run was.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

from explorer.records.clock import step_at
from explorer.records.summary import MOVED
from explorer.report.charts import line_chart
from perception.screenshots import thumbnail_data_uri
from perception.world import MAX_CELLS, MAX_OBJECTS, World

MAX_MESSAGES = 1000  # rows of the message timeline; a longer run's report says how many it left out
MAX_FRAMES = 300  # the replay's frames; a longer run's replay shows every 2nd, 4th, ... and the last
MAX_PICTURES = 200  # the filmstrip's steps (a game run); likewise
MAX_TRAIL = 200  # the points of an agent's trail a frame draws: the latest
MAX_PANEL_ROWS = 1001  # a frame's table: a row per member at one time (--agents is at most 1000)
SCREENSHOT_DIR = "screenshots"  # in the run directory, where a game run keeps its screenshots

Record = dict[str, Any]  # a trace line, as explorer/records/run_files.py checked it
_Series = tuple[list[float], list[int]]  # a chart's line: (the steps, the values)
T = TypeVar("T")


def when_of(record: Record) -> float:
    """The step a record's tick counts as on the team's clock (step k at t = k - 1)."""
    return step_at(record["time"]) if record.get("time") is not None else record["step"]


class Sent(NamedTuple):
    """One message a step sent: a director passes on (`via` it: --comm star and tree) its first sender's."""

    sender: str
    via: str | None
    to: list[str]
    text: str

    def members(self) -> str:
        """Who it concerns, for the page's filter: its sender, who passed it on and its recipients ("all")."""
        return " ".join(dict.fromkeys(name for name in (self.sender, self.via, *self.to) if name))


def sent_by(record: Record) -> list[Sent]:
    """What a step said: its message, or a director's directives and the messages it passed on."""
    agent, out = record["agent_id"], record.get("message_out")
    return (
        ([Sent(agent, None, [out["recipient"]], out["message"])] if out else [])
        + [Sent(agent, None, [directive["to"]], directive["message"]) for directive in record.get("directives") or ()]
        + [Sent(r["sender"], agent, r["to"], r["message"]) for r in record.get("relayed") or ()]
    )


def _grow(seen: set[Any], items: Iterable[Hashable], most: int = MAX_CELLS) -> None:
    """Add `items` to `seen` up to `most` of them: no world has more cells than MAX_CELLS, so only a
    tampered trace meets the bound."""
    for item in items:
        if len(seen) < most:
            seen.add(item)


def note_sightings(
    record: Record, when: float, first_seen: dict[tuple[int, int], float], object_cells: dict[str, tuple[int, ...]]
) -> None:
    """The cells `record` saw first at `when`, and where its objects stand, each kept within its bound."""
    for x, y, *_ in record.get("seen_cells", ()):
        if (x, y) not in first_seen and len(first_seen) < MAX_CELLS:
            first_seen[(x, y)] = when
    for name, cell in (record.get("object_cells") or {}).items():
        if name in object_cells or len(object_cells) < MAX_OBJECTS:
            object_cells[name] = tuple(cell)


class Thinned(Generic[T]):
    """At most `limit` items of a stream, evenly spread: every one while they fit, then every 2nd, every
    4th, ...; and the last one offered."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.every = 1  # the items kept are those offered at multiples of it
        self.offered = 0
        self._items: list[T] = []
        self._last: Callable[[], T] | None = None  # makes the latest item offered, where it is not kept

    def offer(self, make: Callable[[], T]) -> None:
        """The next item: `make()` makes it, now where it is kept, at the end where it may be the last."""
        self._last = make
        if self.offered % self.every == 0:
            item = make()
            self._items.append(item)
            self._last = None
            if len(self._items) > self.limit:
                if len(self._items) % 2 == 0:  # the halving drops the latest: keep it as the last
                    self._last = lambda: item
                self._items = self._items[::2]
                self.every *= 2
        self.offered += 1

    def kept(self) -> list[T]:
        """The items kept, in order, the last one offered among them."""
        if self._last is not None:
            self._items.append(self._last())
            self._last = None
        return self._items

    def note(self, what: str, of: str) -> str | None:
        """What the thinning left out, for the page ("the replay shows every 4th of the run's 1,200 steps")."""
        if self.every == 1:
            return None
        return f"{what} shows every {_ordinal(self.every)} of the run's {self.offered:,} {of}, and the last."


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


class StepLine:
    """A curve drawn as steps: a point where its value changes, and its last point."""

    def __init__(self) -> None:
        self.xs: list[float] = []
        self.ys: list[int] = []
        self._end: tuple[float, int] | None = None  # the latest point, where its value did not change

    def at(self, x: float, y: int) -> None:
        if self.ys and self.ys[-1] == y:
            self._end = (x, y)
            return
        self._end = None
        if self.xs and self.xs[-1] == x:
            self.ys[-1] = y  # the same time: its later count
        else:
            self.xs.append(x)
            self.ys.append(y)

    def series(self) -> _Series:
        if self._end is None:
            return self.xs, self.ys
        return self.xs + [self._end[0]], self.ys + [self._end[1]]


class Curves:
    """The discovery and coverage curves: per agent what it saw itself, and the ground the team saw, over steps,
    over cells moved, and over the run's clock where it has one."""

    def __init__(self, agents: list[str], clock: str | None = None) -> None:
        self.objects = {agent: StepLine() for agent in agents}
        self.cells = {agent: StepLine() for agent in agents}
        self.team = StepLine()
        self.seen_objects: dict[str, set[str]] = {agent: set() for agent in agents}
        self.seen_cells: dict[str, set[tuple[int, ...]]] = {agent: set() for agent in agents}
        self.team_cells: set[tuple[int, ...]] = set()
        # A run with a clock (--schedule event or realtime) is drawn against its seconds as well: `clock`
        # names them ("simulated seconds"); None for a run on lock-step, whose clock counts its steps.
        self.clock = clock
        self.objects_by_time = {agent: StepLine() for agent in agents}
        self.cells_by_time = {agent: StepLine() for agent in agents}
        # Ground seen against cells moved (a step whose action moved): each agent's own, and the team's.
        self.moved = dict.fromkeys(agents, 0)
        self.team_moved = 0
        self.cells_by_distance = {agent: StepLine() for agent in agents}
        self.team_by_distance = StepLine()

    def add(self, record: Record) -> None:
        agent = record["agent_id"]
        if agent not in self.objects:
            return  # a coordinator sees nothing itself
        when = when_of(record)
        cells = [tuple(cell) for cell in record.get("seen_cells", ())]
        _grow(self.seen_objects[agent], record.get("visible_objects", ()), MAX_OBJECTS)
        _grow(self.seen_cells[agent], cells)
        _grow(self.team_cells, cells)
        self.objects[agent].at(when, len(self.seen_objects[agent]))
        self.cells[agent].at(when, len(self.seen_cells[agent]))
        self.team.at(when, len(self.team_cells))
        if self.clock and record.get("time") is not None:
            self.objects_by_time[agent].at(record["time"], len(self.seen_objects[agent]))
            self.cells_by_time[agent].at(record["time"], len(self.seen_cells[agent]))
        # What the step saw, at the distance before its move (as the summary's cells_by_distance has it).
        self.cells_by_distance[agent].at(self.moved[agent], len(self.seen_cells[agent]))
        self.team_by_distance.at(self.team_moved, len(self.team_cells))
        moved = (record.get("result") or {}).get("outcome") == MOVED
        self.moved[agent] += moved
        self.team_moved += moved

    def charts(self, discovery_curve: list[list[int]], seconds_curve: list[list[float]] | None = None) -> list[str]:
        """The charts' fragments; `discovery_curve` is the summary's [step, objects found by the team], and
        `seconds_curve` its [seconds, objects found, cells seen] on the run's clock, where it has one."""
        discovery = {
            "team": ([step for step, _ in discovery_curve], [n for _, n in discovery_curve]),
            **{f"{agent} saw": line.series() for agent, line in self.objects.items()},
        }
        charts = [line_chart("discovery", "Objects found", "step", "objects", discovery)]
        if self.team_cells:
            coverage = {"team": self.team.series(), **{f"{a} saw": line.series() for a, line in self.cells.items()}}
            charts.append(line_chart("coverage", "Ground seen", "step", "cells", coverage))
            by_distance = {
                "team": self.team_by_distance.series(),
                **{f"{a} saw": line.series() for a, line in self.cells_by_distance.items()},
            }
            x_title = "cells moved (the team's; each agent's own)"
            charts.append(line_chart("coverage-distance", "Ground seen, by distance", x_title, "cells", by_distance))
        if self.clock:
            charts += self._clock_charts(self.clock, seconds_curve or [])
        return charts

    def _clock_charts(self, clock: str, seconds_curve: list[list[float]]) -> list[str]:
        """Objects found and ground seen against the run's seconds: the team's as the summary counted them
        at each commit (a point where a count changes), each agent's from when it looked."""
        found, seen = StepLine(), StepLine()
        for seconds, objects, cells in seconds_curve:
            found.at(seconds, int(objects))
            seen.at(seconds, int(cells))
        team = {"team": found.series()} if seconds_curve else {}
        discovery = {**team, **{f"{a} saw": line.series() for a, line in self.objects_by_time.items()}}
        charts = [line_chart("discovery-seconds", "Objects found, by the clock", clock, "objects", discovery)]
        if self.team_cells:
            team = {"team": seen.series()} if seconds_curve else {}
            coverage = {**team, **{f"{a} saw": line.series() for a, line in self.cells_by_time.items()}}
            charts.append(line_chart("coverage-seconds", "Ground seen, by the clock", clock, "cells", coverage))
        return charts


class Messages:
    """Who told whom what, and when, in the order they were sent: the first MAX_MESSAGES of them."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.left_out = 0

    def add(self, record: Record) -> None:
        for sent in sent_by(record):
            if len(self.rows) < MAX_MESSAGES:
                sender = f"{sent.sender} via {sent.via}" if sent.via else sent.sender
                row = {"step": when_of(record), "sender": sender, "recipient": ", ".join(sent.to), "text": sent.text}
                self.rows.append({**row, "members": sent.members()})
            else:
                self.left_out += 1

    def page(self) -> dict[str, Any]:
        return {"rows": self.rows, "left_out": self.left_out}


Frame = tuple[dict[str, Any], dict[str, Any]]  # (the map's frame, its panel)


class Replay:
    """The map's replay (mock mode): a frame per tick time, the agents where they looked from, their trails
    and the finds so far, each with a panel of what each agent saw, did and said then; at most MAX_FRAMES,
    evenly spread. And when the team first saw each cell, and where the trace saw each object.

    The trace holds its lines in time order; a line out of it is shown with the frame before it.
    """

    def __init__(self, agents: list[str], discoveries: dict[str, dict[str, Any]]) -> None:
        self.trails: dict[str, deque[tuple[float, float]]] = {agent: deque(maxlen=MAX_TRAIL) for agent in agents}
        self.latest: dict[str, tuple[float, Record]] = {}  # agent -> (the time it counts at, its latest record)
        self.found_at = {name: found["step"] for name, found in discoveries.items()}
        self.first_seen: dict[tuple[int, int], float] = {}
        self.object_cells: dict[str, tuple[int, ...]] = {}  # what the trace saw, for a world file gone
        self.frames: Thinned[Frame] = Thinned(MAX_FRAMES)
        self._when: float | None = None  # the time of the frame being gathered
        self._rows: list[dict[str, str]] = []

    def add(self, record: Record) -> None:
        when = when_of(record) if self._when is None else max(when_of(record), self._when)
        if self._when is not None and when != self._when:
            self._close()
        self._when = when
        if record["agent_id"] in self.trails and record.get("pose"):
            self.latest[record["agent_id"]] = (when, record)
        if len(self._rows) < MAX_PANEL_ROWS:
            self._rows.append(panel_row(record))
        note_sightings(record, when, self.first_seen, self.object_cells)

    def _close(self) -> None:
        """The frame being gathered is complete: move the agents, and offer it."""
        when, rows = self._when, self._rows
        assert when is not None
        poses = self._move(when)
        self._rows = []
        self.frames.offer(lambda: self._frame(when, poses, rows))

    def _move(self, when: float) -> dict[str, tuple[float, float, str]]:
        """Where each agent stands at `when`, its trail taken there: where it looked from then, or where
        its last step took it."""
        poses = {}
        for agent, (looked, record) in self.latest.items():
            pose = record["pose"] if looked == when else (record.get("result") or {}).get("pose") or record["pose"]
            x, y, _ = pose["position"]
            poses[agent] = (x, y, pose["facing"])
            trail = self.trails[agent]
            if not trail or trail[-1] != (x, y):
                trail.append((x, y))
        return poses

    def _frame(self, when: float, poses: dict[str, tuple[float, float, str]], rows: list[dict[str, str]]) -> Frame:
        label = f"{when:g}"
        frame = {
            "label": label,
            "poses": poses,
            "trails": {agent: ([x for x, _ in trail], [y for _, y in trail]) for agent, trail in self.trails.items()},
            "found": {name for name, step in self.found_at.items() if step is not None and step <= when},
        }
        return frame, {"label": label, "rows": rows}

    def finish(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(the map's frames, their panels), once every line was added."""
        if self._when is not None:
            self._close()
            self._when = None
        kept = self.frames.kept()
        return [frame for frame, _ in kept], [panel for _, panel in kept]

    def world(self, world: World | None, discoveries: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        """The map's ground truth (`map_ground`) as the trace saw it."""
        return map_ground(world, self.first_seen, self.object_cells, discoveries)


def map_ground(
    world: World | None,
    first_seen: dict[tuple[int, int], float],
    object_cells: dict[str, tuple[int, ...]],
    discoveries: dict[str, dict[str, Any]],
) -> dict[str, Any] | None:
    """The map's ground truth: the world file's walls, rooms and objects (or, where it is gone, what the
    trace saw: `first_seen` and `object_cells`), with who found each and when; None where the trace's cells
    span more than any world's."""
    rooms = world.rooms if world is not None else ()
    if world is not None:
        width, depth, walls, objects = world.width, world.depth, sorted(world.walls), world.objects
    else:
        width = max((x for x, _ in first_seen), default=0) + 1
        depth = max((y for _, y in first_seen), default=0) + 1
        walls, objects = [], object_cells
        if width * depth > MAX_CELLS:
            return None
    return {
        "width": width,
        "depth": depth,
        "walls": walls,
        "rooms": rooms,
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


def panel_row(record: Record) -> dict[str, str]:
    result = record.get("result") or {}
    pose = record.get("pose")
    room = f" in {record['room']}" if record.get("room") else ""
    return {
        "agent": record["agent_id"],
        "pose": f"({', '.join(map(str, pose['position']))}) {pose['facing']}{room}" if pose else "",
        "saw": ", ".join(record.get("visible_objects") or ()) or record.get("visible_caption", ""),
        "did": f"{record['action']}: {result.get('outcome', '')}" if record.get("action") else "",
        "said": " | ".join(_said(sent) for sent in sent_by(record)),
        "new": ", ".join(record.get("new_objects") or ()),
    }


def _said(sent: Sent) -> str:
    """One message of a step, as its row in the map's table says it."""
    return f"{sent.sender}'s to {', '.join(sent.to)}: {sent.text}" if sent.via else f"to {sent.to[0]}: {sent.text}"


class Filmstrip:
    """A game run's steps: each one's screenshot with its caption, objects, decision and dead-reckoned
    position, and the frames just before and after its action; at most MAX_PICTURES, evenly spread."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.pictures: Thinned[dict[str, Any]] = Thinned(MAX_PICTURES)

    def add(self, record: Record) -> None:
        self.pictures.offer(lambda: self._picture(record))

    def _picture(self, record: Record) -> dict[str, Any]:
        decision = record.get("decision") or {}
        result = record.get("result") or {}
        pose = result.get("pose") or record.get("pose")
        action_frames = result.get("frames") or {}
        change = result.get("view_change")
        return {
            "agent": record["agent_id"],
            "step": record["step"],
            "image": self._thumbnail(record.get("image_path"), 320),
            "caption": record.get("visible_caption", ""),
            "objects": ", ".join(record.get("visible_objects") or ()),
            "action": record.get("action") or "",
            "reason": decision.get("reason", ""),
            "outcome": result.get("outcome", ""),
            "view_change": f"{change:.1%} of the view changed" if change is not None else "",
            "before": self._thumbnail(action_frames.get("before"), 160),
            "after": self._thumbnail(action_frames.get("after"), 160),
            "pose": f"({', '.join(map(str, pose['position']))}) facing {pose['facing']}" if pose else "",
        }

    def _thumbnail(self, image: str | None, width: int) -> str | None:
        """A data: URI of the screenshot a trace names, if it is there. Only the run's own screenshots are
        read, by name: a trace cannot have the page show a file from elsewhere on the machine."""
        name = Path(image).name if image else ""
        path = self.run_dir / SCREENSHOT_DIR / name
        if name in ("", ".", "..") or "\0" in name or not path.exists():
            return None
        return thumbnail_data_uri(path, width)
