"""What a person watching the run sees: a live table while it runs, a summary at the end."""

from __future__ import annotations

import logging
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.logging import RichHandler
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from explorer.config.team_options import COORDINATOR
from explorer.records.run_view import RunShown, plain
from explorer.report.text_map import TextMap
from perception.base import Pose


def _count(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _short_pose(pose):
    """2,3,0 N: the cell and the facing's initial (a pose dict, or "" before the first step)."""
    if not pose:
        return ""
    x, y, z = pose["position"]
    return f"{x},{y},{z} {pose['facing'][0].upper()}"


class _PlainRichHandler(RichHandler):
    def render_message(self, record, message):
        return Text(plain(message))


class RunConsole:
    """The live table (and map) while a run goes, and its summary at the end: the command line's `RunView`."""

    @classmethod
    def shown(cls, shown: RunShown) -> RunConsole:
        return cls(shown.members, shown.steps, shown.total_objects, shown.verbosity, shown.world_size)

    def __init__(
        self,
        agent_ids: list[str],
        steps: int,
        total_objects: int | None,
        verbosity: int,
        world_size: tuple[int, int] | None = None,
    ) -> None:
        """`world_size` (width, depth) draws the team's map beside the table (mock mode)."""
        # No markup: a name like "[/]" from a world file or a model is shown as it is, never parsed.
        self.console = Console(markup=False, emoji=False, highlight=False)
        self.verbosity = verbosity
        self.total_objects = total_objects
        self.rows: dict[str, dict[str, Any]] = {
            agent_id: {"step": 0, "pose": "", "action": "", "result": "", "found": 0} for agent_id in agent_ids
        }
        self.team_found: list[str] = []
        self.progress = Progress(
            TextColumn("steps"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=self.console
        )
        self.task = self.progress.add_task("steps", total=steps, start=False)
        self.live: Live | None = None
        self.map = TextMap(*world_size, [a for a in agent_ids if a != COORDINATOR]) if world_size else None

    def log_handler(self):
        level = {-1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}[self.verbosity]
        handler = _PlainRichHandler(console=self.console, show_path=False, markup=False)
        handler.setLevel(level)
        return handler

    def __enter__(self):
        self.progress.start_task(self.task)  # the clock starts with the agents, not the model load
        if self.verbosity >= 0:
            self.live = Live(self._view(), console=self.console, refresh_per_second=4)
            self.live.start()
        return self

    def __exit__(self, *exc):
        if self.live is not None:
            self.live.update(self._view())
            self.live.stop()

    def step_committed(self, records, team_found, round_complete):
        for record in records:
            row = self.rows[record["agent_id"]]
            result = record.get("result")
            directives = record.get("directives")
            if self.map is not None:
                self.map.add(record)
            row.update(
                step=record["step"],
                pose=result["pose"] if result else "",
                # A coordinator neither sees nor moves: what it did is the directives it sent.
                action=record.get("action") or (_count(len(directives), "directive") if directives is not None else ""),
                result=result["outcome"] if result else "",
            )
            row["found"] += len(record.get("new_objects", []))
        self.team_found = team_found
        if round_complete:
            self.progress.advance(self.task)
        if self.live is not None:
            self.live.update(self._view())

    def _view(self):
        if self.map is None:
            table = self._table(
                ("Agent", "Step", "Pose", "Last action", "Result", "Found first"),
                lambda row: (
                    Pose.from_dict(row["pose"]).describe() if row["pose"] else "",
                    plain(row["action"]),
                    row["result"],
                ),
            )
        else:  # narrow, so that the map fits beside it in 80 columns: the pose short, "!" for a blocked move
            table = self._table(
                ("Agent", "Step", "At", "Did", "Found"),
                lambda row: (
                    _short_pose(row["pose"]),
                    plain(row["action"]) + ("!" if row["result"] == "blocked" else ""),
                ),
            )
        total = f"/{self.total_objects}" if self.total_objects else ""
        found = plain(f"Team found {len(self.team_found)}{total}: {', '.join(self.team_found) or '-'}")
        if self.map is None:
            return Group(table, found, self.progress)
        return Group(self._with_map(table, self.map), found, self.progress)

    def _table(self, columns, middle):
        """The agents' table; `middle(row)` gives the cells between the step and the finds."""
        table = Table(title="Agents", expand=False, box=None, pad_edge=False, header_style="bold underline")
        for column in columns:
            table.add_column(column)
        for agent_id, row in self.rows.items():
            table.add_row(agent_id, str(row["step"]), *middle(row), str(row["found"]))
        if not any(row["step"] for row in self.rows.values()):
            # The embedding model loads while the agents take their first step: say why nothing moves yet.
            table.caption = "First step under way (the embedding model loads meanwhile, a few seconds)..."
        return table

    def _with_map(self, table: Table, live_map: TextMap) -> Group | Table:
        """The map to the table's right where the terminal is wide enough, else below it; cropped to fit."""
        table_lines = len(self.rows) + 5  # title, header, rule, a row per agent, margins
        free_width = (self.console.width - self.console.measure(table).maximum - 6) // 2  # in cells, 2 characters each
        beside = free_width >= min(live_map.width, 8)
        columns = free_width if beside else (self.console.width - 4) // 2
        # The found line and the progress bar, the panel's borders and its legend's two lines.
        rows = self.console.height - 6 - (0 if beside else table_lines)
        panel = Panel(
            Group(live_map.render(columns, max(3, rows)), live_map.legend()),
            title="Team map",
            width=max(2 * min(columns, live_map.width) + 4, 24),
        )  # the legend wraps to the map's width
        if not beside:
            return Group(table, panel)
        grid = Table.grid(padding=(0, 2))
        grid.add_row(table, panel)
        return grid

    def print_summary(self, summary, run_dir) -> None:
        self.console.print()
        self.console.print(_agents_summary_table(summary))
        self._print_finds(summary)
        if summary.get("search"):
            self.console.print(_targets_line(summary["search"]), soft_wrap=True)
        self.console.print(_model_calls_line(summary["llm"]))
        self.console.print(_decisions_line(summary))
        self.console.print(plain(f"Run directory: {run_dir}"), soft_wrap=True)
        if (run_dir / "report.html").is_file():
            self.console.print(plain(f"Report: {run_dir / 'report.html'} (open it in a browser)"), soft_wrap=True)

    def _print_finds(self, summary) -> None:
        """What the team found, of how many, and by which step it had found them all."""
        total = summary["total_objects"]
        coverage = f" of {total} ({summary['coverage']:.0%})" if total else ""
        found = plain(", ".join(summary["objects_discovered"]) or "-")
        self.console.print(f"Objects found: {len(summary['objects_discovered'])}{coverage}: {found}")
        if total:
            full = summary["first_full_discovery_step"]
            self.console.print(f"All objects found by step: {full if full is not None else 'not within this run'}")


def _targets_line(search) -> str:
    """A search task's targets, each with the step it was first found at, or not found; and SPL, where known."""
    steps = search["steps_to_target"]
    told = [
        f"{target} ({'step ' + str(steps[target]) if steps.get(target) else 'not found'})"
        for target in search["targets"]
    ]
    spl = search.get("spl")
    return plain("Targets: " + ", ".join(told) + ("" if spl is None else f"; SPL {spl:g}"))


def _agents_summary_table(summary) -> Table:
    """A row per agent: its steps, finds, messages, policy and model calls."""
    table = Table(title=plain(f"Run summary: {summary['world']} ({summary['status']})"))
    for column in (
        "Agent",
        "Steps",
        "Found first",
        "Messages",
        "Policy",
        "Model calls",
        "Parse failures",
        "Errors",
    ):
        table.add_column(column)
    for agent_id, agent in summary["per_agent"].items():
        llm = agent["llm"]
        table.add_row(
            agent_id,
            str(agent["steps"]),
            str(len(agent["found_first"])),
            str(agent["messages_sent"]),
            plain(agent["policy"] or "-"),
            str(llm["calls"]),
            str(llm["parse_failures"]),
            str(llm["errors"]),
        )
    return table


def _model_calls_line(llm) -> str:
    """The model calls' totals: retries, tokens, cost and latency (where any call had one)."""
    cost = "unknown" if llm["cost_usd"] is None else f"${llm['cost_usd']:.4f}"
    latency = llm["latency_seconds"]
    latency_text = "" if latency["p50"] is None else f", latency p50 {latency['p50']:.2f} s, p90 {latency['p90']:.2f} s"
    return (
        f"Model calls: {llm['calls']} ({llm['retries']} retries, tokens {llm['prompt_tokens']} in, "
        f"{llm['completion_tokens']} out, "
        f"cost {cost}{latency_text})"
    )


def _decisions_line(summary) -> str:
    """Decisions (and the planner's share), messages sent (and those never delivered), wall time."""
    messages = summary["messages"]
    return (
        f"Decisions: {summary['decisions']}"
        + (f" ({summary['planner_steps']} by the planner)" if summary.get("planner_steps") else "")
        + f"    Messages sent: {messages['sent']}"
        + (f" ({messages['never_delivered']} never delivered)" if messages["never_delivered"] else "")
        + "    "
        + (
            "Wall time: not on record"
            if summary["wall_seconds"] is None
            else f"Wall time: {summary['wall_seconds']:.1f} s"
        )
    )
