"""What a message concerns, for the members that pass messages on (--comm star and tree).

A message is about places: the pose its sender is heading for, the ground it covered, the walls it met
(explorer/policies/sentences.py). It concerns an explorer when one of those places lies
within `reach` cells of where the explorer is or is going; a message that names no place (a model's free
text, a find) concerns everyone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import explorer.policies.sentences as sentences
from explorer.policies.sentences import Box
from nodes.decision_context import SightReport
from perception.base import Message

Point = tuple[int, int]


def places(text: str) -> list[Box]:
    """The places a message names, each as a box (x0, x1, y0, y1): a heading as a box of one cell."""
    boxes = [*sentences.read_walls(text), *((x0, x1, y0, y1) for x0, x1, y0, y1, _ in sentences.read_covered(text))]
    heading = sentences.read_heading(text)
    if heading:
        x, y = heading[0], heading[1]
        boxes.append((x, x, y, y))
    return boxes


def box_distance(box: Box, point: Point) -> int:
    """Cells from `point` to the nearest cell of `box`, along the larger axis."""
    x0, x1, y0, y1 = box
    x, y = point
    return max(x0 - x, 0, x - x1, y0 - y, 0, y - y1)


def concerns(text: str, where: Iterable[Point], reach: int) -> bool:
    """Whether a message concerns a member at (or going to) the points `where`."""
    named = places(text)
    return not named or any(box_distance(box, point) <= reach for box in named for point in where)


def concerns_region(text: str, region: Box | None, reach: int) -> bool:
    """Whether a message names a place within `reach` of `region` (or names none, or the region is not known)."""
    named = places(text)
    return region is None or not named or any(_box_gap(box, region) <= reach for box in named)


def _box_gap(a: Box, b: Box) -> int:
    """Cells between two boxes, along the larger axis (0 where they meet)."""
    return max(a[0] - b[1], b[0] - a[1], a[2] - b[3], b[2] - a[3], 0)


def reaches_beyond(text: str, region: Box, reach: int) -> bool:
    """Whether a message names a place within `reach` of ground outside `region` (or names none)."""
    x0, x1, y0, y1 = region
    inner = (x0 + reach, x1 - reach, y0 + reach, y1 - reach)
    named = places(text)
    return not named or any(not _inside(box, inner) for box in named)


def _inside(box: Box, region: Box) -> bool:
    x0, x1, y0, y1 = box
    return region[0] <= x0 and x1 <= region[1] and region[2] <= y0 and y1 <= region[3]


def passed_on(
    said: Sequence[tuple[str, str, int]], members: Sequence[str], where: dict[str, list[Point]], reach: int
) -> list[Message]:
    """Each (sender, text, step) said, as a message to each member but its sender that it concerns."""
    return [
        Message(sender, member, text, step)
        for sender, text, step in said
        for member in members
        if member != sender and concerns(text, where.get(member, ()), reach)
    ]


def said_in(reports: Iterable[SightReport]) -> list[tuple[str, str, int]]:
    """(sender, text, step) of what each report's explorer told the team."""
    return [(report.sender, report.said, report.step) for report in reports if report.said]
