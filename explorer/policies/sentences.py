"""The team's short sentences: what an agent found, covered and intends, written and read back.

Plain sentences a model could also write ("Heading to (9, 2, 0) facing
east.", "Walls x 3-3, y 0-4."), read leniently, so that the offline explorer
learns from a model teammate as well as from another explorer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from nodes.decision_context import Cell, Wall

# A world has at most a million cells, so a longer number is no cell's (and int() refuses 4,300 digits).
_NUMBER = r"(-?\d{1,9})"
_CELL = rf"\(\s*{_NUMBER}\s*,\s*{_NUMBER}\s*(?:,\s*{_NUMBER}\s*)?\)"
_HEADING = re.compile(
    rf"heading (?:to|for|towards)\s*{_CELL}(?:\s*,?\s*(?:facing|looking)\s+(north|east|south|west))?", re.I
)
_COVERED = re.compile(
    rf"covered\s+x\s*{_NUMBER}\s*(?:-|to)\s*{_NUMBER}\s*,?\s*y\s*{_NUMBER}\s*(?:-|to)\s*{_NUMBER}(?:\s*,?\s*(?:on\s+)?level\s*{_NUMBER})?",
    re.I,
)
# A room searched, as the prompt asks a model to say it in a search: "Kitchen at x 3-7, y 0-4: no laptop."
_SEARCHED = re.compile(
    rf"\bx\s*{_NUMBER}\s*(?:-|to)\s*{_NUMBER}\s*,?\s*y\s*{_NUMBER}\s*(?:-|to)\s*{_NUMBER}\s*:\s*no\b", re.I
)
_DIRECTIVE = re.compile(
    rf"directive\s*#?\s*(\d{{1,9}})\s*:\s*(?:(?:explore from|look from|go to)\s*{_CELL}"
    rf"(?:\s*,?\s*(?:facing|looking)\s+(north|east|south|west))?|do\s+([a-z_]+))",
    re.I,
)
_WALLS = re.compile(rf"walls?\s+x\s*{_NUMBER}\s*(?:-|to)\s*{_NUMBER}\s*,?\s*y\s*{_NUMBER}\s*(?:-|to)\s*{_NUMBER}", re.I)
MAX_BOXES = 3  # per message
MIN_BOX = 3  # cells: smaller patches are not worth the words
MIN_WALL_BOX = 1  # cells: a single wall can close a corridor

Heading = tuple[int, int, int, str | None]  # (x, y, level, facing or None) a message names
# A directive as read: (number, the pose to look from or None, the action to take or None).
DirectiveRead = tuple[int, Heading | None, str | None]
Box = tuple[int, int, int, int]  # (x0, x1, y0, y1)


def heading(pose: tuple[int, int, int, str, int]) -> str:
    x, y, z, facing, _ = pose
    return f"Heading to ({x}, {y}, {z}) facing {facing}."


def directive(number: int, target: Sequence[int | str | None] | None = None, action: str | None = None) -> str:
    """A coordinator's directive: 'Directive 3: explore from (5, 2, 0) facing east.', 'Directive 4: go to
    (5, 2, 0).' or 'Directive 5: do look_left.'; `target` is (x, y, level) or (x, y, level, facing)."""
    if action:
        return f"Directive {number}: do {action}."
    assert target is not None, "a directive gives a target where it gives no action"
    x, y, z, *facing = target
    if facing and facing[0]:
        return f"Directive {number}: explore from ({x}, {y}, {z}) facing {facing[0]}."
    return f"Directive {number}: go to ({x}, {y}, {z})."


def read_directive(text: str) -> DirectiveRead | None:
    """The last directive a message gives: (number, target or None, action or None), or None.

    The target is (x, y, level, facing or None)."""
    matches = _DIRECTIVE.findall(text)
    if not matches:
        return None
    number, x, y, z, facing, action = matches[-1]
    if action:
        return int(number), None, action.lower()
    return int(number), (int(x), int(y), int(z or 0), facing.lower() or None), None


def covered(cells: Collection[Cell]) -> tuple[str, set[Cell]]:
    """(sentence, cells it says): the largest rectangles wholly inside `cells` (at most MAX_BOXES,
    each of MIN_BOX cells or more), as 'Covered x 0-5, y 0-4, level 0.' Whole rectangles
    only, so a reader never takes unseen ground for covered."""
    remaining = set(cells)
    boxes: list[str] = []
    while len(boxes) < MAX_BOXES:
        box = _largest_rectangle(remaining)
        if box is None:
            break
        x0, x1, y0, y1, z = box
        boxes.append(f"Covered x {x0}-{x1}, y {y0}-{y1}, level {z}.")
        remaining -= {(x, y, z) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    return " ".join(boxes), set(cells) - remaining


def walls(cells: Collection[Wall]) -> tuple[str, set[Wall]]:
    """(sentence, cells it says): the wall cells (x, y) as the largest rectangles of them (at most
    MAX_BOXES), as 'Walls x 3-3, y 0-4.' Single walls too: in a maze each one closes a way."""
    remaining = {(x, y, 0) for x, y in cells}
    boxes: list[str] = []
    while len(boxes) < MAX_BOXES:
        box = _largest_rectangle(remaining, MIN_WALL_BOX)
        if box is None:
            break
        x0, x1, y0, y1, _ = box
        boxes.append(f"Walls x {x0}-{x1}, y {y0}-{y1}.")
        remaining -= {(x, y, 0) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    return " ".join(boxes), set(cells) - {(x, y) for x, y, _ in remaining}


# Messages read at once: a step's news is read by every teammate it reaches, so read once for the team.
MESSAGES_READ = 4096


@lru_cache(maxsize=MESSAGES_READ)
def read_walls(text: str) -> tuple[Box, ...]:
    """The boxes of walls a message says: ((x0, x1, y0, y1), ...)."""
    boxes: list[Box] = []
    for x0, x1, y0, y1 in _WALLS.findall(text):
        left, right = sorted((int(x0), int(x1)))
        low, high = sorted((int(y0), int(y1)))
        boxes.append((left, right, low, high))
    return tuple(boxes)


def _largest_rectangle(cells: set[Cell], smallest: int = MIN_BOX) -> tuple[int, int, int, int, int] | None:
    """(x0, x1, y0, y1, level) of the largest rectangle of `cells` on one level, if of `smallest` cells or more."""
    best, best_area = None, smallest - 1
    for z in sorted({c[2] for c in cells}):
        level = {(x, y) for x, y, lz in cells if lz == z}
        xs, ys = [c[0] for c in level], [c[1] for c in level]
        heights = dict.fromkeys(range(min(xs), max(xs) + 1), 0)
        for y in range(min(ys), max(ys) + 1):
            for x in heights:
                heights[x] = heights[x] + 1 if (x, y) in level else 0
            # The largest rectangle under this row's histogram, by a stack of rising heights.
            stack: list[tuple[int, int]] = []  # (start, height)
            for x in list(heights) + [max(xs) + 1]:
                height = heights.get(x, 0)
                start = x
                while stack and stack[-1][1] >= height:
                    start, top = stack.pop()
                    if top * (x - start) > best_area:
                        best_area, best = top * (x - start), (start, x - 1, y - top + 1, y, z)
                stack.append((start, height))
    return best


@lru_cache(maxsize=MESSAGES_READ)
def read_heading(text: str) -> Heading | None:
    """The last pose a message says its sender is heading for: (x, y, z, facing or None), or None."""
    matches = _HEADING.findall(text)
    if not matches:
        return None
    x, y, z, facing = matches[-1]
    return int(x), int(y), int(z or 0), facing.lower() or None


@lru_cache(maxsize=MESSAGES_READ)
def read_covered(text: str) -> tuple[tuple[int, int, int, int, int | None], ...]:
    """The boxes a message says were covered: ((x0, x1, y0, y1, level or None), ...). A room it says was
    searched ("Kitchen at x 3-7, y 0-4: no laptop.") is covered on every level."""
    found = _COVERED.findall(text) + [(*box, "") for box in _SEARCHED.findall(text)]
    boxes = []
    for x_a, x_b, y_a, y_b, z in found:
        x0, x1 = sorted((int(x_a), int(x_b)))
        y0, y1 = sorted((int(y_a), int(y_b)))
        boxes.append((x0, x1, y0, y1, int(z) if z else None))
    return tuple(boxes)
