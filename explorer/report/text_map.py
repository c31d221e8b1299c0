"""The world as the team knows it, drawn from above for the live console (mock mode).

Built from the committed steps only, as the trace has them: the ground the
agents have seen, the walls they have met, the objects found, and each agent
as its number with an arrow for its facing. Two characters per cell keep the
map square; a world wider or deeper than the space given is cropped around the
team.
"""

from __future__ import annotations

from rich.text import Text

ARROWS = {"north": "^", "east": ">", "south": "v", "west": "<"}
AGENT_STYLES = ("bold red", "bold blue", "bold green", "bold magenta", "bold yellow", "bold cyan")
LABELS = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class TextMap:
    def __init__(self, width, depth, agent_ids):
        self.width, self.depth = width, depth
        self.agents = {agent_id: i for i, agent_id in enumerate(agent_ids)}
        self.seen: set[tuple[int, int]] = set()
        self.walls: set[tuple[int, int]] = set()
        self.objects: dict[tuple[int, int], str] = {}  # cell -> who found what is there
        self.poses: dict[str, tuple[int, int, str]] = {}

    def add(self, record):
        """What a committed step tells the team."""
        self.seen.update((x, y) for x, y, *_ in record.get("seen_cells", ()))
        self.walls.update((x, y) for x, y in record.get("seen_walls", ()))
        cells = record.get("object_cells") or {}
        for name in record.get("new_objects", ()):
            if name in cells:
                self.objects[tuple(cells[name][:2])] = record["agent_id"]
        result = record.get("result")
        if result and record["agent_id"] in self.agents:
            x, y, _ = result["pose"]["position"]
            self.poses[record["agent_id"]] = (x, y, result["pose"]["facing"])

    def legend(self):
        agents = Text("  ").join(
            Text(f"{LABELS[i % len(LABELS)]} {agent_id}", style=AGENT_STYLES[i % len(AGENT_STYLES)])
            for agent_id, i in self.agents.items()
        )
        return agents + Text("  * found  ## wall  . seen", style="dim")

    def render(self, columns, rows) -> Text:
        """At most `columns` cells across and `rows` down, north up."""
        left = _window(self.width, columns, [x for x, _, _ in self.poses.values()])
        bottom = _window(self.depth, rows, [y for _, y, _ in self.poses.values()])
        at = {(x, y): (agent_id, facing) for agent_id, (x, y, facing) in self.poses.items()}
        lines = []
        for y in range(min(self.depth, bottom + rows) - 1, bottom - 1, -1):
            line = Text()
            for x in range(left, min(self.width, left + columns)):
                line.append(*self._cell(x, y, at))
            lines.append(line)
        return Text("\n").join(lines)

    def _cell(self, x, y, at):
        if (x, y) in at:
            agent_id, facing = at[(x, y)]
            index = self.agents[agent_id]
            return LABELS[index % len(LABELS)] + ARROWS[facing], AGENT_STYLES[index % len(AGENT_STYLES)]
        if (x, y) in self.objects:
            index = self.agents.get(self.objects[(x, y)], 0)
            return "* ", AGENT_STYLES[index % len(AGENT_STYLES)]
        if (x, y) in self.walls:
            return "##", "grey50"
        if (x, y) in self.seen:
            return ". ", "grey62"
        return "  ", ""


def _window(size, span, positions):
    """The first cell of a window `span` wide on an axis `size` long, centred on the agents where it must crop."""
    if size <= span or not positions:
        return 0
    centre = sum(positions) // len(positions)
    return max(0, min(size - span, centre - span // 2))
