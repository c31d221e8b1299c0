"""The world's rooms on the report's map: a light outline around each room's cells, and its name.

Plotly's layout dicts only (explorer/report/charts.py draws them). Plotly reads a label's text as a few
HTML tags and entities (<b>, <a href>, &lt;...), so a name is escaped to show as it is written: a world
file's markup stays text.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Sequence

from perception.rooms import Cell, Room

LABEL_CHARS = 40  # a room's name on the map, cut beyond this
OUTLINE = {"color": "#6a6aa8", "width": 1.5, "dash": "dot"}


def room_shapes(rooms: Sequence[Room]) -> list[dict]:
    """An outline for each room, along the edges between its cells and the cells outside it."""
    return [
        {"type": "path", "path": outline_path(room.cells), "line": OUTLINE, "layer": "above", "name": "room"}
        for room in rooms
    ]


def room_labels(rooms: Sequence[Room]) -> list[dict]:
    """Each room's name, escaped, on its cell nearest its middle."""
    labels = []
    for room in rooms:
        x, y = label_cell(room.cells)
        name = room.name if len(room.name) <= LABEL_CHARS else room.name[: LABEL_CHARS - 3] + "..."
        labels.append(
            {
                "x": x,
                "y": y,
                "text": html.escape(name, quote=False),
                "showarrow": False,
                "font": {"size": 11, "color": "#3a3a78"},
                "bgcolor": "rgba(255, 255, 255, 0.5)",
            }
        )
    return labels


def outline_path(cells: frozenset[Cell]) -> str:
    """An SVG path over the cells' outer edges (cell (x, y) spans x - 0.5 to x + 0.5), runs joined into lines."""
    across: defaultdict[float, list[int]] = defaultdict(list)  # an edge's y -> the x of each cell it bounds
    along: defaultdict[float, list[int]] = defaultdict(list)  # an edge's x -> the y of each cell it bounds
    for x, y in cells:
        for side in (-1, 1):
            if (x, y + side) not in cells:
                across[y + side / 2].append(x)
            if (x + side, y) not in cells:
                along[x + side / 2].append(y)
    moves = [f"M{start:g},{y:g}H{end:g}" for y, xs in sorted(across.items()) for start, end in _runs(xs)]
    moves += [f"M{x:g},{start:g}V{end:g}" for x, ys in sorted(along.items()) for start, end in _runs(ys)]
    return "".join(moves)


def _runs(numbers: Iterable[int]) -> list[tuple[float, float]]:
    """The runs of consecutive numbers, as the spans of their cells: [1, 2, 3, 7] -> [(0.5, 3.5), (6.5, 7.5)]."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return [(first - 0.5, last + 0.5) for first, last in runs]


def label_cell(cells: frozenset[Cell]) -> Cell:
    """The room's cell nearest the middle of its cells (on the room, whatever its shape)."""
    middle_x = sum(x for x, _ in cells) / len(cells)
    middle_y = sum(y for _, y in cells) / len(cells)
    return min(cells, key=lambda cell: ((cell[0] - middle_x) ** 2 + (cell[1] - middle_y) ** 2, cell))
