"""The system agent: HERON's third level, above two coordinators or more (--coordinators K).

It neither sees nor moves, and runs the coordinators' loop (nodes/coordinator.py) at its own tick_interval
and delays (the profiles file's `system` section). At its first tick it divides the world between the
coordinators, a block each (as near square as the count allows), and each explorer to the block nearest it, as evenly as
the team divides; it tells each coordinator its group and its region (explorer/team/hierarchy.py's sentence,
which also routes the group's reports to that coordinator). Then, as the work shifts, it moves one explorer
a tick from the group with the least unseen ground per explorer to the one with the most, and sends the
explorer a directive to the unseen ground of its new region. Its directives take priority over the
coordinators' (explorer/policies/directed.py). What it knows of the ground is where the explorers stand (the
team's store) and the ground they said they covered, in the messages passed up to it.

Under --comm tree it passes each message passed up to it on to the other coordinators whose region it concerns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import explorer.policies.sentences as sentences
from explorer.policies.relay import Point, concerns_region
from explorer.policies.sentences import Box
from explorer.team.hierarchy import group_sentence
from nodes.decision_context import CoordinatorContext, Directive, PoseDict
from nodes.interfaces import DecisionOutcome
from perception.base import Message

MOVE_RATIO = 2.0  # a group with this many times another's unseen ground per explorer takes one of its explorers
MOVE_COOLDOWN = 3  # ticks before an explorer moved is moved again
RELAY_REACH = 3  # view distances from a region: the messages that concern its coordinator (which filters them again)


class SystemAgent:
    name = "offline"

    def __init__(self, agent_id: str, coordinators: Sequence[str], groups: Mapping[str, str], relaying: bool) -> None:
        self.agent_id = agent_id
        self.coordinators = list(coordinators)
        self.groups = dict(groups)  # explorer -> its coordinator, as it last said
        self.relaying = relaying  # --comm tree: what one group said goes down to the others it concerns
        self.regions: dict[str, Box] = {}  # coordinator -> its block of the world
        self.seen: set[Point] = set()  # columns the team is known to have seen
        self.moved: dict[str, int] = {}  # explorer -> the tick it was last moved
        self.sent = 0  # directives numbered in order (the coordinators number theirs from far above)
        self._decided: tuple[int, DecisionOutcome] | None = None

    def direct(self, context: CoordinatorContext) -> DecisionOutcome:
        if self._decided and self._decided[0] == context.team.step:
            return self._decided[1]  # a retried call
        self._learn(context)
        directives: list[Directive] = []
        if not self.regions:
            told = self._divide(context)
        else:
            told, directives = self._rebalance(context)
        step = context.team.step
        words = [Message(self.agent_id, c, group_sentence(self._group(c), self.regions[c]), step) for c in told]
        outcome = DecisionOutcome(
            None, directives=tuple(directives), relayed=tuple(words + self._pass_down(context)), prompt=""
        )
        self._decided = (step, outcome)
        return outcome

    def _learn(self, context: CoordinatorContext) -> None:
        """The ground seen: around where each explorer stands, and what the messages passed up say covered."""
        reach = context.team.view_distance or 1
        for pose in context.positions.values():
            if pose:
                x, y, _ = pose["position"]
                self.seen.update((x + dx, y + dy) for dx in range(-reach, reach + 1) for dy in range(-reach, reach + 1))
        for message in context.messages:
            for x0, x1, y0, y1, _ in sentences.read_covered(message["message"]):
                self.seen.update((x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1))

    def _group(self, coordinator: str) -> list[str]:
        return [explorer for explorer, c in self.groups.items() if c == coordinator]

    def _divide(self, context: CoordinatorContext) -> list[str]:
        """A block of the world to each coordinator, each explorer to the nearest block with room; returns
        the coordinators to tell (all)."""
        size = context.team.size
        assert size is not None, "the system agent divides a grid world"
        blocks = _blocks(size[0], size[1], len(self.coordinators))
        self.regions = dict(zip(self.coordinators, blocks))
        room = dict.fromkeys(self.coordinators, math.ceil(len(self.groups) / len(self.coordinators)))
        explorers = list(self.groups)
        pairs = sorted(
            (_distance(self.regions[c], _where(context.positions.get(e))), explorers.index(e), c)
            for e in explorers
            for c in self.coordinators
        )
        placed: set[str] = set()
        for _, index, coordinator in pairs:
            explorer = explorers[index]
            if explorer not in placed and room[coordinator] > 0:
                self.groups[explorer], room[coordinator] = coordinator, room[coordinator] - 1
                placed.add(explorer)
        return list(self.coordinators)

    def _unseen(self, coordinator: str) -> list[Point]:
        x0, x1, y0, y1 = self.regions[coordinator]
        return [(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1) if (x, y) not in self.seen]

    def _rebalance(self, context: CoordinatorContext) -> tuple[list[str], list[Directive]]:
        """One explorer from the group with the least unseen ground per explorer to the one with the most,
        where the difference is worth the walk: (the coordinators to tell, the explorer's directive)."""
        unseen = {c: self._unseen(c) for c in self.coordinators}
        load = {c: len(unseen[c]) / max(len(self._group(c)), 1) for c in self.coordinators}
        givers = [c for c in self.coordinators if len(self._group(c)) > 1]
        if not givers:
            return [], []
        giver, taker = min(givers, key=load.__getitem__), max(self.coordinators, key=load.__getitem__)
        if giver == taker or load[taker] <= MOVE_RATIO * load[giver] or not unseen[taker]:
            return [], []
        step = context.team.step
        free = [e for e in self._group(giver) if step - self.moved.get(e, -MOVE_COOLDOWN) >= MOVE_COOLDOWN]
        if not free:
            return [], []
        region = self.regions[taker]
        explorer = min(free, key=lambda e: _distance(region, _where(context.positions.get(e))))
        x, y = min(unseen[taker], key=lambda cell: _gap(cell, _where(context.positions.get(explorer))))
        pose = context.positions.get(explorer)
        level = pose["position"][2] if pose else 0
        self.groups[explorer], self.moved[explorer] = taker, step
        reason = (
            f"moved from {giver}'s group to {taker}'s, which has {load[taker]:.0f} unseen cells per explorer "
            f"against {load[giver]:.0f}: the nearest unseen ground of {taker}'s region"
        )
        return [giver, taker], [self._directive(explorer, (x, y, level), reason)]

    def _directive(self, explorer: str, target: tuple[int, int, int], reason: str) -> Directive:
        self.sent += 1
        message = sentences.directive(self.sent, target)
        return Directive(id=self.sent, to=explorer, kind="goal", target=list(target), message=message, reason=reason)

    def _pass_down(self, context: CoordinatorContext) -> list[Message]:
        """Under tree: each message passed up, to the coordinators (but its sender's) whose region it concerns."""
        if not self.relaying:
            return []
        reach = RELAY_REACH * (context.team.view_distance or 1)
        return [
            Message(m["sender"], coordinator, m["message"], context.team.step)
            for m in context.messages
            for coordinator in self.coordinators
            if coordinator != self.groups.get(m["sender"])
            and concerns_region(m["message"], self.regions.get(coordinator), reach)
        ]


def _where(pose: PoseDict | None) -> Point:
    if pose is None:
        return (0, 0)
    x, y, _ = pose["position"]
    return (x, y)


def _gap(a: Point, b: Point) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _distance(region: Box, point: Point) -> float:
    """From a point to the middle of a region."""
    x0, x1, y0, y1 = region
    return abs(point[0] - (x0 + x1) / 2) + abs(point[1] - (y0 + y1) / 2)


def _blocks(width: int, depth: int, parts: int) -> list[Box]:
    """The grid cut in `parts` blocks (x0, x1, y0, y1): columns by rows, the blocks as near square as can be."""
    columns = min(
        (c for c in range(1, parts + 1) if parts % c == 0),
        key=lambda c: (abs(math.log((width / c) / (depth / (parts // c)))), c),
    )
    rows = parts // columns
    return [
        (width * c // columns, width * (c + 1) // columns - 1, depth * r // rows, depth * (r + 1) // rows - 1)
        for r in range(rows)
        for c in range(columns)
    ]
