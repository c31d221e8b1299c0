"""The repair of a layout whose free ground is in parts: each part is joined to the largest through the
fewest walls, in time near the grid's size.

Which walls open is what a 0-1 breadth-first search from the ground joined so
far first finds on its way to the part (its ties broken by the order the joined
cells' set iterates in): every world made so far, and every bench and test on
them, rests on that. Run whole it costs the grid for each part, so here it is
worked out only where it decides anything, near the part. The search takes:

- the layers in turn, a cell's layer being the fewest walls between the joined
  ground and it (a wall counting itself);
- within layer 0, the joined cells in their set's order, each followed at once
  by the free ground it reaches that is not joined (a pocket a way opened);
- within a higher layer, its walls (the roots) in the order the layer below met
  them: by where that neighbour came, then from which side (NEIGHBOURS order),
  each followed at once by the pockets it opens, depth first, the cell put on
  the stack last taken first.

So each cell's place is a key made from its root's, worked out as asked. The
part is reached from the first root beside it in its layer; the way back runs
through one root a layer.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import compress, count

Cell = tuple[int, int]
Key = tuple  # a cell's place in the search: comparable with the keys of its layer only
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))  # the order the search meets a cell's neighbours in


@dataclass
class SetOrder:
    """Where each member of a growing set comes when it is iterated, as a place to compare.

    CPython's set keeps its members in their slots as it grows, unless it moves
    to a larger table, which shows in its size in bytes. So one pass gives every
    member's place, good until that size changes; the members added since are
    placed among them by a cheaper pass, which counts the members read before.
    """

    cells: set[Cell]
    places: dict[Cell, int] = field(default_factory=dict)  # at the last full reading
    table: int = -1  # the set's size in bytes then
    added: set[Cell] = field(default_factory=set)  # members since
    added_places: dict[Cell, tuple[int, int, int]] = field(default_factory=dict)

    def grew(self, cells: Iterable[Cell]) -> None:
        """`cells` were added to the set."""
        self.added.update(cell for cell in cells if cell not in self.places)

    def check_table(self) -> None:
        """Read every place again if the set has moved to a larger table (call before asking places)."""
        if sys.getsizeof(self.cells) != self.table:
            self.places = dict(zip(self.cells, count()))
            self.table = sys.getsizeof(self.cells)
            self.added, self.added_places = set(), {}

    def place(self, cell: Cell) -> tuple[int, ...]:
        """`cell`'s place: lower than the places of the members after it in the set's order. _Outdated when
        members added since places were last given had to be placed: those given before may not compare."""
        if cell not in self.added:
            return (self.places[cell], 1)
        if cell not in self.added_places:
            self._place_added()
            raise _Outdated
        return self.added_places[cell]

    def _place_added(self) -> None:
        """Each added member's place: (the members of the full reading before it, 0, where it comes now),
        below the place (n, 1) of the first full reading's member after it."""
        flags = list(map(self.added.__contains__, self.cells))
        members = compress(self.cells, flags)
        self.added_places = {
            cell: (now - before, 0, now) for before, (now, cell) in enumerate(zip(compress(count(), flags), members))
        }


class _Outdated(Exception):
    """The places given so far may not compare with those given from now on: search again."""


def fewest_walls_way(size: tuple[int, int], walls: set[Cell], joined: SetOrder, part: set[Cell]) -> list[Cell]:
    """The wall cells on the way from the joined cells to `part` that crosses the fewest walls, as the 0-1
    breadth-first search from the joined cells in their set's order finds it, nearest the part first."""
    joined.check_table()
    try:
        return _Search(size, walls, joined).way_to(part)
    except _Outdated:
        return _Search(size, walls, joined).way_to(part)


class _Search:
    """The search's view of one grid, worked out cell by cell as asked (each answer kept)."""

    def __init__(self, size: tuple[int, int], walls: set[Cell], joined: SetOrder) -> None:
        self.width, self.depth = size
        self.walls = walls
        self.joined = joined
        self.pocket_of: dict[Cell, frozenset[Cell]] = {}
        self.beside: dict[frozenset[Cell], set[Cell]] = {}  # a pocket's walls and joined cells
        self.layers: dict[Cell | frozenset[Cell], int] = {}
        self.keys: dict[Cell, Key] = {}
        self.roots: dict[frozenset[Cell], Cell] = {}
        self.floods: dict[Cell, dict[Cell, int]] = {}

    def way_to(self, part: set[Cell]) -> list[Cell]:
        first = next(iter(part))
        if self.layer(first) == 0:  # joined already by free ground
            return []
        way = [self.root(self.pocket(first))]
        below = self.parent(way[0])
        while self.layer(below) > 0:
            way.append(below if below in self.walls else self.root(self.pocket(below)))
            below = self.parent(way[-1])
        return way

    def neighbours(self, cell: Cell) -> list[Cell]:
        x, y = cell
        return [(x + dx, y + dy) for dx, dy in NEIGHBOURS if 0 <= x + dx < self.width and 0 <= y + dy < self.depth]

    def is_open(self, cell: Cell) -> bool:
        """Free ground not joined: a pocket's."""
        return cell not in self.walls and cell not in self.joined.cells

    def pocket(self, cell: Cell) -> frozenset[Cell]:
        """The free ground not joined that `cell` lies in, as far as it reaches without a wall or a joined cell."""
        if cell not in self.pocket_of:
            reached, queue = {cell}, deque([cell])
            while queue:
                for near in self.neighbours(queue.popleft()):
                    if near not in reached and self.is_open(near):
                        reached.add(near)
                        queue.append(near)
            pocket = frozenset(reached)
            self.pocket_of.update(dict.fromkeys(pocket, pocket))
            self.beside[pocket] = {near for cell in pocket for near in self.neighbours(cell) if near not in pocket}
        return self.pocket_of[cell]

    def layer(self, cell: Cell) -> int:
        """The fewest walls from the joined ground to `cell`, a wall counting itself."""
        if cell in self.joined.cells:
            return 0
        node = cell if cell in self.walls else self.pocket(cell)
        if node not in self.layers:
            self.layers[node] = self._fewest_walls_from(node)
        return self.layers[node]

    def _fewest_walls_from(self, start: Cell | frozenset[Cell]) -> int:
        """0-1 breadth first from a wall or a pocket, a pocket taken whole, until beside the joined ground."""
        walls_to: dict[Cell | frozenset[Cell], int] = {start: 1 if isinstance(start, tuple) else 0}
        queue = deque([start])
        while True:
            node = queue.popleft()
            here = walls_to[node]
            for near in self.beside[node] if isinstance(node, frozenset) else self.neighbours(node):
                if near in self.joined.cells:
                    return here
                step = 1 if near in self.walls else 0
                ahead = near if step else self.pocket(near)
                if ahead not in walls_to or here + step < walls_to[ahead]:
                    walls_to[ahead] = here + step
                    queue.appendleft(ahead) if step == 0 else queue.append(ahead)

    def key(self, cell: Cell) -> Key:
        """Where the search takes `cell`, against the other cells of its layer: (its root's place, its place
        in the root's flood, 0 for the root itself)."""
        if cell not in self.keys:
            if cell in self.joined.cells:
                self.keys[cell] = (self.joined.place(cell), 0)
            elif cell in self.walls:
                below = self.parent(cell)
                self.keys[cell] = ((self.key(below), _side(below, cell)), 0)
            else:
                root = self.root(self.pocket(cell))
                self.keys[cell] = (self.key(root)[0], self.flood(root)[cell])
        return self.keys[cell]

    def parent(self, wall: Cell) -> Cell:
        """The cell the search meets `wall` from: its first neighbour one layer down."""
        below = self.layer(wall) - 1
        return _first([near for near in self.neighbours(wall) if self.layer(near) == below], self.key)

    def root(self, pocket: frozenset[Cell]) -> Cell:
        """The cell whose turn opens `pocket`: the first joined cell beside it, or the first wall beside it in
        its layer."""
        if pocket not in self.roots:
            layer = self.layer(next(iter(pocket)))
            beside = self.beside[pocket]
            if layer == 0:
                first = _first([cell for cell in beside if cell in self.joined.cells], self.joined.place)
            else:
                first = _first([cell for cell in beside if self.layer(cell) == layer], self.key)
            self.roots[pocket] = first
        return self.roots[pocket]

    def flood(self, root: Cell) -> dict[Cell, int]:
        """The free cells the search takes straight after `root`, each with its turn from 1: the pockets
        `root` opens, depth first."""
        if root not in self.floods:
            stack = [near for near in self.neighbours(root) if self.is_open(near) and self._opens(root, near)]
            seen, turns = set(stack), dict[Cell, int]()
            while stack:
                cell = stack.pop()
                turns[cell] = len(turns) + 1
                for near in self.neighbours(cell):
                    if near not in seen and self.is_open(near):
                        seen.add(near)
                        stack.append(near)
            self.floods[root] = turns
        return self.floods[root]

    def _opens(self, root: Cell, cell: Cell) -> bool:
        layer = 0 if root in self.joined.cells else self.layer(root)
        return self.layer(cell) == layer and self.root(self.pocket(cell)) == root


def _first(cells: list[Cell], place: Callable[[Cell], Key]) -> Cell:
    """The first of `cells` the search takes; a cell alone is first without working out where it comes."""
    return cells[0] if len(cells) == 1 else min(cells, key=place)


def _side(cell: Cell, near: Cell) -> int:
    """Which of `cell`'s neighbours `near` is, in NEIGHBOURS order."""
    return NEIGHBOURS.index((near[0] - cell[0], near[1] - cell[1]))
