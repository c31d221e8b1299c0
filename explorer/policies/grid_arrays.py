"""A grid's cells as arrays: what a map knows beside its sets, for the passes over the whole grid that a
search makes each step (every unseen cell's worth, the team's split of the ground), which would otherwise
take a Python loop over every cell. The one module that imports scipy: its breadth-first shortest paths.

A cell (x, y, z) of a grid of size (W, D, H) is the array index [x, y, z], or (x * D + y) * H + z flat.
The classical explorers' passes are here too (explorer/policies/classical/): the path distances over the cells
a team knows, the frontier's connected groups, and the optimal assignment of robots to goals.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

Cell = tuple[int, int, int]
Size = tuple[int, int, int]


@dataclass(frozen=True, eq=False)
class CellMask:
    """Some of a grid's cells, as a boolean array of its size: `cell in mask` as a set answers it."""

    array: np.ndarray  # (W, D, H) bool

    def __contains__(self, cell: object) -> bool:
        if not isinstance(cell, tuple) or len(cell) != 3:
            return False
        x, y, z = cell
        width, depth, height = self.array.shape
        return 0 <= x < width and 0 <= y < depth and 0 <= z < height and bool(self.array[x, y, z])

    @classmethod
    def of(cls, size: Size, cells: Collection[Cell]) -> CellMask:
        return cls(cell_array(size, cells))

    def cells(self) -> frozenset[Cell]:
        return frozenset((x, y, z) for x, y, z in np.argwhere(self.array).tolist())


def mark(array: np.ndarray, cells: Collection[tuple[int, ...]]) -> None:
    """Set `array` True at `cells`: cells (x, y, z) of a grid's shape, or columns (x, y) of a (W, D) array;
    any outside it are left out."""
    if cells:
        at = np.array(list(cells), dtype=np.intp).reshape(len(cells), array.ndim)
        at = at[((at >= 0) & (at < array.shape)).all(axis=1)]
        array[tuple(at.T)] = True


def unmark(array: np.ndarray, cells: Collection[tuple[int, ...]]) -> None:
    """Set `array` False at `cells` (as `mark`)."""
    if cells:
        array[tuple(np.array(list(cells), dtype=np.intp).reshape(len(cells), array.ndim).T)] = False


def cell_array(shape: tuple[int, ...], cells: Collection[tuple[int, ...]]) -> np.ndarray:
    """A boolean array of `shape`, True at `cells` (as `mark`)."""
    array = np.zeros(shape, dtype=bool)
    mark(array, cells)
    return array


@dataclass(frozen=True)
class KnownArrays:
    """What a map knows (explorer/policies/grid_map.py's GridMap), as arrays beside its sets (the teammates'
    ground has no set: it comes a box at a time, and is only ever looked up)."""

    seen: np.ndarray  # (W, D, H): the cells seen
    walls: np.ndarray  # (W, D): the columns walled
    open: np.ndarray  # (W, D): the columns seen free
    teammates_ground: np.ndarray  # (W, D, H): the cells teammates said they covered

    @classmethod
    def of(
        cls,
        size: Size,
        seen: Collection[Cell],
        walls: Collection[tuple[int, int]],
        open_columns: Collection[tuple[int, int]],
    ) -> KnownArrays:
        """The arrays of the cells seen and the columns walled and seen free; no ground covered by teammates yet."""
        columns = size[:2]
        return cls(
            cell_array(size, seen),
            cell_array(columns, walls),
            cell_array(columns, open_columns),
            np.zeros(size, dtype=bool),
        )


# Sets of cells whose indices are kept at once: a team's sights (explorer/policies/grid_map.py's SIGHTS_KEPT).
INDICES_KEPT = 16384


def union_of(size: Size, sets: Collection[frozenset[Cell]]) -> CellMask:
    """The cells of any of `sets` (cells within the grid), as a mask."""
    array = np.zeros(int(np.prod(size)), dtype=bool)
    if sets:
        array[np.concatenate([_indices(size, cells) for cells in sets])] = True
    return CellMask(array.reshape(size))


@lru_cache(maxsize=INDICES_KEPT)
def _indices(size: Size, cells: frozenset[Cell]) -> np.ndarray:
    """The flat indices of a set of cells within the grid: worked out once for a set many maps mark (a
    teammate's sight, which the team shares)."""
    return np.array(_flat(size, cells), dtype=np.intp)


@lru_cache(maxsize=4)
def _moves(size: Size) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices) of every move between cells one apart, as a CSR matrix's, from each flat cell to
    each of its neighbours within the grid: the same for every map of the grid, so made once."""
    flat = np.arange(int(np.prod(size))).reshape(size)
    sources, targets = [], []
    for axis in range(3):
        low = flat[tuple(slice(0, -1) if a == axis else slice(None) for a in range(3))].ravel()
        high = flat[tuple(slice(1, None) if a == axis else slice(None) for a in range(3))].ravel()
        sources += [low, high]
        targets += [high, low]
    source, target = np.concatenate(sources), np.concatenate(targets)
    order = np.lexsort((target, source))
    indptr = np.searchsorted(source[order], np.arange(flat.size + 1))
    return indptr.astype(np.int32), target[order].astype(np.int32)


def _path_moves(size: Size, walls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices) of the moves a map allows: into any cell of a column with no known wall (the
    planner's rule: a move into a wall is blocked; out of one, from a start standing there, is not)."""
    indptr, indices = _moves(size)
    allowed = np.repeat(~walls.ravel(), size[2])[indices]
    kept_before = np.concatenate(([0], np.cumsum(allowed, dtype=np.int32)))
    return kept_before[indptr], indices[allowed]


def _flat(size: Size, cells: Collection[Cell]) -> list[int]:
    """The flat indices of the cells within the grid (a cell outside it has no place in a mask)."""
    width, depth, height = size
    return [(x * depth + y) * height + z for x, y, z in cells if 0 <= x < width and 0 <= y < depth and 0 <= z < height]


def nearer_others(size: Size, walls: np.ndarray, mine: Cell, others: Collection[Cell]) -> CellMask:
    """The cells a path over the moves reaches sooner from one of `others` than from `mine`: a Voronoi split
    of the ground by path distance. A cell is `mine`'s when its distance from `mine` is the least from any
    start (ties go to `mine`), so two breadth-first passes decide it whatever the team's size.
    `walls` is the (W, D) array of the columns known walled."""
    moves = _path_moves(size, walls)
    from_others = _path_distances(moves, _flat(size, others))
    return CellMask((from_others < _path_distances(moves, _flat(size, [mine]))).reshape(size))


def load_scipy() -> None:
    """Import the parts of scipy these passes use, now. They are imported where used, so that the command line's
    --help and refusals wait for none of them (1-3 s); a run loads them before its threads start, since loading
    them holds the interpreter for seconds, and a split team's heartbeats would go quiet meanwhile."""
    import scipy.ndimage
    import scipy.optimize
    import scipy.sparse.csgraph  # noqa: F401


def _path_distances(moves: tuple[np.ndarray, np.ndarray], starts: list[int]) -> np.ndarray:
    """Each cell's moves (`moves`: a CSR matrix's indptr and indices) from the nearest of `starts` (inf where
    none reaches it): a breadth-first pass from one more cell, one move from every start, whose tree gives
    each cell's depth."""
    from scipy.sparse import csr_matrix  # here, not above: the command line's --help and refusals wait for no scipy
    from scipy.sparse.csgraph import breadth_first_order

    indptr, indices = moves
    cells = indptr.size - 1
    if not starts:
        return np.full(cells, np.inf)
    rooted_indptr = np.append(indptr, indptr[-1] + len(starts))
    rooted_indices = np.append(indices, np.array(starts, dtype=indices.dtype))
    rooted = csr_matrix((np.ones(rooted_indices.size), rooted_indices, rooted_indptr), shape=(cells + 1, cells + 1))
    _, parents = breadth_first_order(rooted, cells, return_predecessors=True)
    return _depths(parents, cells)[:cells] - 1


def _depths(parents: np.ndarray, root: int) -> np.ndarray:
    """Each node's depth in the tree `parents` (scipy's predecessors: negative for the root and the nodes
    never reached, whose depth is inf), by pointer jumping: log(depth) passes over the whole array."""
    reached = parents >= 0
    up = np.where(reached, parents, root)
    depth = reached.astype(np.float64)
    depth[~reached] = np.inf
    depth[root] = 0.0
    while (up != root).any():
        depth += depth[up]
        up = up[up]
    return depth


def known_path_distances(passable: np.ndarray, starts: Sequence[Cell]) -> np.ndarray:
    """For each of `starts`, each cell's moves from it over the `passable` cells only (a (W, D, H) bool array;
    a start is passable whatever the array says): a (len(starts), W, D, H) array, inf where no way leads.
    One breadth-first pass a start, all of them in one call into scipy."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    size = passable.shape
    if not starts:
        return np.zeros((0, *size))
    allowed = passable.ravel().copy()
    start_cells = _flat(size, starts)
    allowed[start_cells] = True
    indptr, indices = _moves(size)
    kept = allowed[indices] & np.repeat(allowed, np.diff(indptr))
    kept_before = np.concatenate(([0], np.cumsum(kept, dtype=np.int32)))
    graph = csr_matrix((np.ones(int(kept.sum())), indices[kept], kept_before[indptr]), shape=(allowed.size,) * 2)
    return shortest_path(graph, unweighted=True, indices=start_cells).reshape(len(start_cells), *size)


def connected_groups(mask: np.ndarray) -> tuple[np.ndarray, int]:
    """(a label for each cell of `mask`, 1..count, and 0 outside it; the count): its groups of cells one move
    apart, along any axis."""
    from scipy.ndimage import label

    labels, count = label(mask)
    return labels, int(count)


def cheapest_assignment(costs: np.ndarray) -> list[tuple[int, int]]:
    """(row, column) pairs, each row and each column at most once, as many as the smaller side, with the least
    total cost: the Hungarian method (Kuhn 1955), as scipy's linear_sum_assignment solves it."""
    from scipy.optimize import linear_sum_assignment

    rows, columns = linear_sum_assignment(costs)
    return list(zip(rows.tolist(), columns.tolist()))
