"""A semantic prior for the built-in explorer under a search task: ground is worth more in the kinds of room
its targets go with.

The run works out, once, how well each target goes with each kind of room the world has: the cosine
similarity of their embeddings (all-MiniLM-L6-v2, the model the memory uses, so nothing more is loaded),
"a toothbrush" against "things in the bathroom". An explorer then weights an unseen cell by the room it
lies in, as far as it knows the rooms: the one it stands in, those it sees into, and those its doors lead
to (a door tells the room behind it). A cell of a room it does not know yet, or of no room, weighs as the
average kind does: 1. Each kind's weight is exp(SHARPNESS x (its similarity - the average kind's)), for
the targets not found yet, the best of them.

Everything is worked out from what the context says and the run's fixed table, so a retried step and a
replayed run weigh the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from explorer.policies.known_rooms import KnownRooms
from nodes.decision_context import DecisionContext, Wall
from perception.rooms import Room
from perception.targets import missing_targets, spoken

SHARPNESS = 12.0  # how far a kind's similarity above the average raises its ground's worth
TARGET_TEXT = "a {}"
KIND_TEXT = "things in the {}"

Encode = Callable[[list[str]], np.ndarray]  # texts -> L2-normalised rows (memory/embedder.py's encode)
KindWeights = Mapping[str, Mapping[str, float]]  # target -> room kind -> weight (1: the average kind)


def kind_weights(encode: Encode, targets: Sequence[str], kinds: Iterable[str]) -> dict[str, dict[str, float]]:
    """target -> kind -> its weight, for every target and kind, from one batch of embeddings."""
    kinds = sorted(set(kinds))
    if not targets or not kinds:
        return {target: {} for target in targets}
    rows = encode([TARGET_TEXT.format(spoken(t)) for t in targets] + [KIND_TEXT.format(k) for k in kinds])
    similarity = rows[: len(targets)] @ rows[len(targets) :].T
    weights = {}
    for target, row in zip(targets, similarity):
        average = float(np.mean(row))
        weights[target] = {kind: math.exp(SHARPNESS * (float(s) - average)) for kind, s in zip(kinds, row)}
    return weights


class SemanticPrior:
    """One explorer's weights of the ground, from the run's table and the rooms it has come to know."""

    def __init__(self, table: KindWeights) -> None:
        self.table = table
        self.known = KnownRooms()
        self.left: tuple[str, ...] = tuple(table)  # the targets not found yet
        self._weights: dict[Wall, float] | None = None  # (x, y) -> weight, for the ground of known rooms

    def learn(self, context: DecisionContext) -> None:
        """Take in the rooms the step shows and the targets found so far (safe to repeat)."""
        left = tuple(missing_targets(self.table, context.team.discoveries))
        if self.known.learn(context) or left != self.left:
            self.left = left
            self._weights = None

    def weights(self) -> Mapping[Wall, float]:
        """(x, y) -> what an unseen cell there is worth against an unknown room's: the best weight of its room's
        kind for a target not found yet; 1 (not in it) outside the rooms known. The same mapping until what
        the prior knows changes."""
        if self._weights is None:
            self._weights = self._work_out()
        return self._weights

    def room_weight(self, room: Room) -> float:
        """What the unseen ground of a known room is worth: its kind's best weight for a target left."""
        return max((self.table[target].get(room.kind, 1.0) for target in self.left), default=1.0)

    def _work_out(self) -> dict[Wall, float]:
        weights: dict[Wall, float] = {}
        for room in self.known.rooms.values():
            weights.update(dict.fromkeys(room.cells, self.room_weight(room)))
        return weights
