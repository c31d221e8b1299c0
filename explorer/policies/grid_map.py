"""What an agent knows of a grid world, and the planner that walks it there.

The map grows only by set unions keyed on what the context says, so reading
the same context twice changes nothing. Poses are tuples (x, y, z, facing,
pitch): everything that decides a view (roll changes nothing seen).

The planner searches poses cheapest way first (Dijkstra), one edge per action
costing ACTION_COST, over the walls known so far (unknown ground is taken to
be free), and values a pose by the unseen cells it would show against the
cost of the way there (a cell of a column never seen counts for the odds
that it is free, `free_odds`, so that where the world has levels the unseen
levels over ground already walked come before ground only imagined): the
rule of utility-versus-travel-cost frontier exploration (Burgard et al.
2005), as a rate: a goal's worth is its unseen cells per step of the way
(`utility`), so a peek into the opening it is passing beats the corridor's
far end, which stays there. The search ends once no pose farther away could
be among the best goals, given what the best unseen cells of one level are
worth: the bound decides how soon it stops, never what it finds.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from explorer.policies import grid_arrays
from explorer.policies.grid_arrays import CellMask, KnownArrays
from explorer.policies.sentences import Heading
from nodes.decision_context import Cell, DecisionContext, Wall
from perception.base import FACING_VECTORS, Pose, turn
from perception.geometry import CLIMBS, STEP_TURNS, TURNS, ViewCone, apply_action

PoseKey = tuple[int, int, int, str, int]  # (x, y, level, facing, pitch): all that decides a view
Claim = tuple[int, int, int, str | None, int]  # a pose a teammate said it is heading for; facing None where unsaid
Place = Cell | PoseKey | Claim | Heading  # anything that starts with a cell
Step = tuple[float, PoseKey, str | None, int]  # (cost, pose, first action, steps) of a way found
Moves = tuple[tuple[float, str, PoseKey], ...]  # (ACTION_COST, action, pose after) for each of a pose's neighbours

# A goal is worth the unseen cells it shows per step of the way there (a rate,
# so the same rule serves a hall and a maze); the offset keeps a goal one step
# away from being worth many times one two steps away.
DISTANCE_OFFSET = 0.5
TEAM_WEIGHT = 0.1  # worth of a cell a teammate has covered or claimed: its objects are the team's already
# Worth of a cell nearer a teammate than to this agent: the team splits the ground
# as a Voronoi partition over path distance does (coordinated exploration).
REGION_WEIGHT = 0.4
PITCHES = {"look_up": 1, "look_down": -1}
# What an action costs the planner: a step each, but a step sideways or back
# is blind (it shows nothing new ahead), so a long walk is made facing forward.
ACTION_COST = {"forward": 1.0, "backward": 1.5, "move_left": 1.5, "move_right": 1.5}
ACTION_COST.update(dict.fromkeys(("move_up", "move_down", "look_left", "look_right", "look_up", "look_down"), 1.0))
# A little over any sum of cell worths, for the rounding of float sums: it keeps a bound a bound.
ROUNDING_MARGIN = 1e-9


@dataclass(frozen=True)
class Goal:
    """A pose worth reaching: what it would show, how far it is, and the first action there."""

    pose: PoseKey
    gain: float  # unseen cells it would show, teammates' ground weighted down
    new_cells: int  # unseen cells it would show
    cost: float  # of the way there, as the planner counts it (ACTION_COST)
    steps: int  # actions to get there
    first_action: str

    @property
    def utility(self) -> float:
        return utility(self.gain, self.cost)

    @property
    def cell(self) -> Cell:
        return self.pose[:3]


@dataclass(frozen=True)
class UnseenWorths:
    """Each cell's worth to a search (GridMap._unseen_worths), NaN where it is seen or walled: as an array, and
    as a flat list, which a cell's worth is read from as fast as from a dict."""

    array: np.ndarray  # (W, D, H)
    flat: list[float]  # array.ravel(): the cell (x, y, z) at (x * D + y) * H + z


@dataclass(frozen=True)
class OpenGrid:
    """A grid's cells and the planner's moves where no wall is known: the same for every map of a grid of
    this size, so made once (`open_grid`) and shared by a team's maps, which each keep only the moves the
    walls they know change (GridMap._moves)."""

    cells: Mapping[Cell, Cell]  # each cell to itself: one tuple per cell, which every map's caches hold
    # actions -> pose -> its moves with them, filled as the maps' searches need them (the same whichever
    # map works a pose's moves out: they depend on the walls beside it only, and a map beside a wall keeps its own)
    moves: dict[tuple[str, ...], dict[PoseKey, Moves]] = field(default_factory=dict)


@lru_cache(maxsize=4)
def open_grid(size: tuple[int, int, int]) -> OpenGrid:
    """The OpenGrid of a grid of `size` (W, D, H), shared by every map of that size (a run has one world)."""
    width, depth, height = size
    return OpenGrid({cell: cell for cell in itertools.product(range(width), range(depth), range(height))})


@lru_cache(maxsize=4)
def view_cone(view_distance: int) -> ViewCone:
    """The ViewCone of a view distance, with its rays worked out once for every map that sees that far."""
    return ViewCone(view_distance)


# Sights a team keeps at once: a round's teammates' poses and goals, with room to spare.
SIGHTS_KEPT = 16384


@lru_cache(maxsize=SIGHTS_KEPT)
def team_sight(
    view_distance: int, size: tuple[int, int, int], pose: PoseKey, walls: tuple[Wall, ...]
) -> frozenset[Cell]:
    """The cells `pose` shows, as the open grid's cells, given the known walls that could change it (GridMap's
    _walls_in_sight; none: ViewCone.open_sight, no ray traced). Those walls decide it, so it is the same for
    every map of the team that knows them: worked out once for all of them rather than once by each teammate
    that reckons with the pose (an agent-step then costs less per teammate)."""
    cone, shared = view_cone(view_distance), open_grid(size).cells
    seen = cone.sight(Pose(*pose), size, frozenset(walls))[0] if walls else cone.open_sight(Pose(*pose), size)
    return frozenset([shared[cell] for cell in seen])


class GridMap:
    def __init__(self) -> None:
        self.size: tuple[int, int, int] | None = None  # (W, D, H), known from the first view learnt
        self.grid: OpenGrid | None = None  # the grid's shared cells and moves, once its size is known
        self.view_distance = 0
        self.cone = view_cone(0)
        self._seen: set[Cell] = set()
        self._walls: set[Wall] = set()
        self._open: set[Wall] = set()  # (x, y) of the cells seen free
        # The three sets as arrays, and the cells teammates said they covered, once the grid's size is known.
        self._arrays: KnownArrays | None = None
        self.wall_log: list[Wall] = []  # walls in the order met, for the sight cache
        # Cells a pose was expected to show but did not (hidden by walls not
        # yet met): never expected from that pose again.
        self.hidden: dict[PoseKey, set[Cell]] = {}
        # (x, y) -> a search prior's weight, where it is not 1 (SemanticPrior.weights), if there is a prior
        self.ground_weights: Callable[[], Mapping[Wall, float]] | None = None
        self._weight_array: tuple[Mapping[Wall, float], np.ndarray] | None = None  # the last weights, as an array
        self._sights: dict[PoseKey, tuple[int, frozenset[Cell]]] = {}  # pose -> (len(wall_log) then, cells)
        # (view_distance, a (W, D) array: whether a known wall stands within view_distance of the column)
        self._walls_within: tuple[int, np.ndarray] | None = None
        # Poses that show nothing unseen, and never will: cells are only ever seen (or hidden), and a
        # view only narrows as walls are found.
        self._seen_out: set[PoseKey] = set()
        # The moves of the poses beside a known wall (elsewhere the open grid's hold), worked out as searches
        # need them, forgotten when a wall is met beside them (_forget_beside):
        self._moves: dict[PoseKey, Moves] = {}  # pose -> its moves (_work_out_moves)
        self._walled_columns: set[Wall] = set()  # the (x, y) beside a known wall
        self._moves_for: tuple[str, ...] | None = None  # the actions those moves are for

    # What the agent knows: sets, which only grow, each added to through a method that keeps its array in step
    # (the ground teammates covered, a box at a time from their messages, is kept as an array only)

    @property
    def seen(self) -> AbstractSet[Cell]:
        return self._seen

    @property
    def walls(self) -> AbstractSet[Wall]:
        return self._walls

    @property
    def open(self) -> AbstractSet[Wall]:
        """(x, y) of the columns seen free."""
        return self._open

    @property
    def teammates_ground(self) -> CellMask:
        """Cells teammates said they covered."""
        return CellMask(self.arrays.teammates_ground)

    @property
    def arrays(self) -> KnownArrays:
        assert self._arrays is not None, "the map has learnt no view yet"
        return self._arrays

    # What the agent learns

    def learn(self, context: DecisionContext) -> PoseKey:
        """Learn what the agent's view this step showed; returns its pose as a map key."""
        team, view = context.team, context.view
        assert team.size is not None and team.view_distance is not None, "a grid world's size is known"
        return self.learn_view(team.size, team.view_distance, view.pose, view.seen_cells, view.seen_walls)

    def learn_view(
        self,
        size: Sequence[int],
        view_distance: int,
        pose: Pose,
        seen_cells: Iterable[Cell],
        seen_walls: Iterable[Wall],
    ) -> PoseKey:
        """Learn what one view showed: the cells seen from `pose`; returns the pose as a map key."""
        width, depth, height = size
        if self.size != (width, depth, height):
            self.size = (width, depth, height)
            self.grid = open_grid(self.size)
            self._arrays = KnownArrays.of(self.size, self._seen, self._walls, self._open)
            self._walls_within = None  # of the grid's size too
        if view_distance != self.view_distance:
            self.view_distance = view_distance
            self.cone = view_cone(view_distance)
        key = pose_key(pose)
        seen_now = set(seen_cells)
        self.learn_seen(seen_now)
        for wall in seen_walls:
            self.add_wall(wall)
        self.hidden.setdefault(key, set()).update(self.sight(key) - seen_now)
        return key

    def learn_seen(self, cells: Collection[Cell]) -> None:
        """The cells were seen, so their columns are free."""
        self._seen.update(cells)
        grid_arrays.mark(self.arrays.seen, cells)
        self.learn_open({cell[:2] for cell in cells})

    def learn_open(self, columns: Collection[Wall]) -> None:
        """The columns (x, y) are free (not a wall's), whether or not their cells are seen."""
        self._open.update(columns)
        grid_arrays.mark(self.arrays.open, columns)

    def learn_teammates_ground(self, box: tuple[int, int, int, int], level: int | None) -> None:
        """A teammate said it covered the box (x0, x1, y0, y1) on `level` (None: on every level): its part
        within the grid."""
        x0, x1, y0, y1 = box
        if level is None or 0 <= level < self.extent[2]:
            levels = slice(None) if level is None else level
            self.arrays.teammates_ground[max(x0, 0) : max(x1 + 1, 0), max(y0, 0) : max(y1 + 1, 0), levels] = True

    def add_wall(self, cell: Wall) -> None:
        if cell not in self._walls:
            self._walls.add(cell)
            if self.in_grid(*cell):
                self.arrays.walls[cell] = True
            self.wall_log.append(cell)
            self._mark_within_reach(self._walls_in_reach(), cell)
            self._forget_beside(cell)

    def _forget_beside(self, wall: Wall) -> None:
        """The moves into the wall's (x, y) are blocked now: the poses beside it get their own moves (the
        open grid's no longer hold for them), and those they had are forgotten."""
        x, y = wall
        for column in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            self._walled_columns.add(column)
            for z in range(self.extent[2]):
                for facing in FACING_VECTORS:
                    for pitch in (-1, 0, 1):
                        self._moves.pop((*column, z, facing, pitch), None)

    @property
    def extent(self) -> tuple[int, int, int]:
        """The world's size (W, D, H), known once the map has learnt a view."""
        assert self.size is not None, "the map has learnt no view yet"
        return self.size

    def in_grid(self, x: int, y: int) -> bool:
        width, depth, _ = self.extent
        return 0 <= x < width and 0 <= y < depth

    # What a pose shows

    def sight(self, pose: PoseKey, kept: bool = True) -> frozenset[Cell]:
        """The cells `pose` would show, with the walls known so far; cached until a wall that matters to it is met.
        `kept=False`: a pose the planner does not weigh (a teammate's), worked out afresh unless cached, and not
        cached: a map would otherwise keep a sight for each pose of each teammate, step after step."""
        cached = self._sights.get(pose)
        if cached is not None:
            version, cells = cached
            if version == len(self.wall_log):
                return cells
            matters, (x, y) = self.cone.walls_that_matter(pose[3]), pose[:2]
            if all((wx - x, wy - y) not in matters for wx, wy in self.wall_log[version:]):
                self._sights[pose] = (len(self.wall_log), cells)
                return cells
        assert self.size is not None, "the map has learnt no view yet"
        cells = team_sight(self.view_distance, self.size, pose, self._walls_in_sight(pose))
        if kept:
            self._sights[pose] = (len(self.wall_log), cells)
        return cells

    def _walls_in_sight(self, pose: PoseKey) -> tuple[Wall, ...]:
        """The known walls that could change what `pose` sees (on cells of ViewCone.walls_that_matter: no
        other wall does), in the same order for every map that knows them."""
        x, y = pose[0], pose[1]
        if not self._walls_near(x, y):
            return ()
        walls = self._walls
        return tuple(wall for dx, dy in self.cone.walls_that_matter(pose[3]) if (wall := (x + dx, y + dy)) in walls)

    def _walls_near(self, x: int, y: int) -> bool:
        """Whether a known wall stands within view_distance cells of (x, y) along each axis, where it could
        hide a cell (ViewCone.walls_that_matter reaches no farther): a first test, one look-up, before
        _walls_in_sight's cell by cell. A column outside the grid is taken to have one."""
        return not self.in_grid(x, y) or bool(self._walls_in_reach()[x, y])

    def _walls_in_reach(self) -> np.ndarray:
        """The (W, D) array of the columns with a known wall within view_distance: kept as walls are met,
        worked out afresh for another view distance."""
        if self._walls_within is None or self._walls_within[0] != self.view_distance:
            within = np.zeros(self.extent[:2], dtype=bool)
            self._walls_within = (self.view_distance, within)
            for wall in self._walls:
                self._mark_within_reach(within, wall)
        return self._walls_within[1]

    def _mark_within_reach(self, within: np.ndarray, wall: Wall) -> None:
        x, y, reach = wall[0], wall[1], self.view_distance
        within[max(x - reach, 0) : max(x + reach + 1, 0), max(y - reach, 0) : max(y + reach + 1, 0)] = True

    def unseen(self, cells: Iterable[Cell], pose: PoseKey | None = None) -> list[Cell]:
        """Of `cells`, those not seen yet (nor known to be hidden from `pose`)."""
        hidden = self.hidden.get(pose, ()) if pose else ()
        return [cell for cell in cells if cell not in self._seen and cell not in hidden]

    def gain(
        self,
        pose: PoseKey,
        claimed: CellMask | None = None,
        theirs: CellMask | None = None,
    ) -> tuple[float, int]:
        """(worth, unseen cells) of what `pose` would show; `claimed` cells are worth TEAM_WEIGHT,
        `theirs` (nearer a teammate) REGION_WEIGHT."""
        new = self.unseen(self.sight(pose), pose)
        worths = self._worths(claimed, theirs)[tuple(np.array(new, dtype=np.intp).reshape(len(new), 3).T)]
        return sum(worths.tolist()), len(new)

    def _worths(self, claimed: CellMask | None, theirs: CellMask | None) -> np.ndarray:
        """What seeing each cell of the grid would be worth, as a (W, D, H) array: 1, or TEAM_WEIGHT where a
        teammate has covered or claimed it, or REGION_WEIGHT where it is nearer a teammate (`theirs`);
        times its ground's weight under a search task's prior (explorer/policies/semantic_prior.py), where
        there is one, and times free_odds where its column was never seen."""
        arrays = self.arrays
        worth = np.where(theirs.array, REGION_WEIGHT, 1.0) if theirs is not None else np.ones(self.extent)
        worth[arrays.teammates_ground if claimed is None else arrays.teammates_ground | claimed.array] = TEAM_WEIGHT
        if self.ground_weights:
            worth *= self._ground_weight_array(self.ground_weights())[:, :, None]
        never_seen = ~arrays.open
        worth[never_seen] *= self.free_odds
        return worth

    def _ground_weight_array(self, weights: Mapping[Wall, float]) -> np.ndarray:
        """The prior's weights as a (W, D) array (1 where it has none), worked out again when they change."""
        if self._weight_array is None or self._weight_array[0] is not weights:
            array = np.ones(self.extent[:2])
            for (x, y), weight in weights.items():
                if self.in_grid(x, y):
                    array[x, y] = weight
            self._weight_array = (weights, array)
        return self._weight_array[1]

    def _unseen_worths(self, claimed: CellMask | None, theirs: CellMask | None) -> UnseenWorths:
        """Each unseen cell's worth (_worths), NaN where a cell is seen or in a walled column: worked out once
        for a search rather than for each pose."""
        worth = self._worths(claimed, theirs)
        worth[self.arrays.seen | self.arrays.walls[:, :, None]] = np.nan
        return UnseenWorths(worth, worth.ravel().tolist())

    @property
    def free_odds(self) -> float:
        """The odds that a column never seen is free, from the columns seen so far (Laplace's rule of
        succession): high in a hall, low among a corridor's side walls."""
        return (len(self._open) + 1) / (len(self._open) + len(self._walls) + 2)

    @property
    def view_cells(self) -> int:
        """The most cells one view shows."""
        return 1 + sum(2 * ahead + 1 for ahead in range(1, self.view_distance + 1))

    def _gain_with(self, pose: PoseKey, worths: UnseenWorths) -> tuple[float, int]:
        """gain, from the unseen cells' worths (_unseen_worths): the same sum, in the same order."""
        if pose in self._seen_out:
            return 0, 0
        hidden = self.hidden.get(pose, ())
        _, depth, height = self.extent
        flat = worths.flat
        new = [
            worth
            for cell in self.sight(pose)
            if (worth := flat[(cell[0] * depth + cell[1]) * height + cell[2]]) == worth  # not NaN: unseen, unwalled
            and cell not in hidden
        ]
        if not new:
            self._seen_out.add(pose)
        return sum(new), len(new)

    def _most_worth(self, worths: UnseenWorths) -> float:
        """No pose is worth more than this: the worth of the best unseen cells of one level, as many as
        a view shows (a little over, for rounding). Far below a full view once most ground is seen or
        a teammate's, it ends a search early."""
        most = 0.0
        for z in range(self.extent[2]):
            level = worths.array[:, :, z]
            unseen = level[~np.isnan(level)]
            best = min(self.view_cells, unseen.size)
            if best:
                top = np.sort(np.partition(unseen, unseen.size - best)[unseen.size - best :])[::-1]
                most = max(most, sum(top.tolist()))  # as Python sums them: in this order, a float at a time
        return most * (1 + ROUNDING_MARGIN)

    def nearer_others(self, mine: Cell, others: Iterable[Cell]) -> CellMask:
        """The cells nearer (by path over the walls known so far, moves only) one of the cells `others` than
        the cell `mine`: a Voronoi split of the ground (ties are `mine`'s), in two passes whatever the team's
        size (grid_arrays.nearer_others)."""
        return grid_arrays.nearer_others(self.extent, self.arrays.walls, mine, list(others))

    # Where to go

    def neighbours(self, pose: PoseKey, actions: Iterable[str]) -> Iterator[tuple[str, PoseKey]]:
        """(action, pose) for each action that would change the view, over the walls known so far."""
        x, y, z, facing, pitch = pose
        height = self.extent[2]
        for action in actions:
            if action in STEP_TURNS:
                dx, dy = FACING_VECTORS[turn(facing, STEP_TURNS[action])]
                if self.in_grid(x + dx, y + dy) and (x + dx, y + dy) not in self._walls:
                    yield action, (x + dx, y + dy, z, facing, pitch)
            elif action in CLIMBS:
                if 0 <= z + CLIMBS[action] < height and 0 <= z + CLIMBS[action] + pitch < height:
                    yield action, (x, y, z + CLIMBS[action], facing, pitch)
            elif action in TURNS:
                yield action, (x, y, z, turn(facing, TURNS[action]), pitch)
            elif action in PITCHES:
                tilted = pitch + PITCHES[action]
                if -1 <= tilted <= 1 and 0 <= z + tilted < height:
                    yield action, (x, y, z, facing, tilted)

    def goals(
        self,
        start: PoseKey,
        actions: Sequence[str],
        claimed: CellMask | None = None,
        theirs: CellMask | None = None,
        limit: int = 1,
        keep: PoseKey | None = None,
    ) -> tuple[list[Goal], Goal | None]:
        """The `limit` best goals, best first, no two within a few cells of each other.

        `claimed` and `theirs` are cells worth less (see gain). `keep` is a pose whose
        goal is returned as well if it is still worth anything (the current goal, so
        that it is not dropped for a near tie).
        """
        worths = self._unseen_worths(claimed, theirs)
        most = self._most_worth(worths)
        if most == 0:
            return [], None  # nothing left to see
        # What the goal to keep shows, known now: the search may end before it gets there (_kept_goal).
        keep_worth, keep_new = self._gain_with(keep, worths) if keep not in (None, start) else (0, 0)
        found: list[Goal] = []
        kept = None
        floor = float("-inf")  # the utility to beat, once `limit` goals are found
        walk = self._walk(start, actions)
        for cost, pose, first_action, steps in walk:
            if utility(most, cost) <= floor:
                break  # nothing farther can be among the best
            if pose == start:
                continue
            worth, new = self._gain_with(pose, worths)
            # A goal no better than the floor would change nothing (see _insert).
            if new and worth > 0 and (pose == keep or utility(worth, cost) > floor):
                assert first_action is not None, "only the start has no first action"
                goal = Goal(pose, worth, new, cost, steps, first_action)
                if pose == keep:
                    kept = goal
                found = _insert(found, goal, limit)
                floor = found[-1].utility if len(found) >= limit else float("-inf")
        else:
            return found, kept
        if kept is None and keep is not None and keep_new and keep_worth > 0:
            rest = itertools.chain([(cost, pose, first_action, steps)], walk)  # from the pose the search ended at
            kept = self._kept_goal(rest, keep, keep_worth, keep_new, floor)
        return found, kept

    def _kept_goal(self, walk: Iterable[Step], keep: PoseKey, worth: float, new: int, floor: float) -> Goal | None:
        """The goal `keep` (worth `worth`, `new` cells) as the walk on reaches it, or None.

        It counts while nearly the best: it is looked for as long as a pose showing a
        full view of unseen cells could be worth KEEP_SHARE of the best goal's utility
        (`floor`), as far as the search always went for it.
        """
        for cost, pose, first_action, steps in walk:
            if utility(self.view_cells, cost) <= floor * KEEP_SHARE:
                return None
            if pose == keep:
                assert first_action is not None, "only the start has no first action, and `keep` is not the start"
                return Goal(keep, worth, new, cost, steps, first_action)
        return None

    def _walk(self, start: PoseKey, actions: Sequence[str]) -> Iterator[Step]:
        """Every pose reachable from `start`, cheapest way first (ties: the way found first), as
        (cost, pose, first action, steps)."""
        moves, open_moves, walled = self._moves_table(actions), self._open_moves(actions), self._walled_columns
        cheapest = {start: 0.0}  # the cost of the cheapest way queued to each pose
        # (cost, order queued, pose, first action, steps)
        queue: list[tuple[float, int, PoseKey, str | None, int]] = [(0.0, 0, start, None, 0)]
        queued = 0
        never = float("inf")
        while queue:
            cost, _, pose, first_action, steps = heapq.heappop(queue)
            if cost > cheapest[pose]:
                continue  # a dearer way there, queued before the cheaper one
            yield cost, pose, first_action, steps
            table = moves if pose[:2] in walled else open_moves
            pose_moves = table.get(pose)
            if pose_moves is None:
                pose_moves = table[pose] = self._work_out_moves(pose, actions)
            for action_cost, action, after in pose_moves:
                after_cost = cost + action_cost
                if after_cost < cheapest.get(after, never):  # else this way never comes first
                    cheapest[after] = after_cost
                    queued += 1
                    heapq.heappush(queue, (after_cost, queued, after, first_action or action, steps + 1))

    def _work_out_moves(self, pose: PoseKey, actions: Sequence[str]) -> Moves:
        """(ACTION_COST, action, pose after) for each of the pose's neighbours."""
        return tuple((ACTION_COST[action], action, after) for action, after in self.neighbours(pose, actions))

    def _moves_table(self, actions: Sequence[str]) -> dict[PoseKey, Moves]:
        """pose -> its moves with `actions` (_work_out_moves), for the poses beside a known wall."""
        if self._moves_for != tuple(actions):
            self._moves_for, self._moves = tuple(actions), {}
        return self._moves

    def _open_moves(self, actions: Sequence[str]) -> dict[PoseKey, Moves]:
        """pose -> its moves with `actions`, for the poses beside no known wall: the grid's, shared."""
        assert self.grid is not None, "the map has learnt no view yet"
        return self.grid.moves.setdefault(tuple(actions), {})

    def predict(self, pose: PoseKey, actions: Iterable[str]) -> PoseKey:
        """Where `actions` take the pose, over the walls known so far."""
        moved = Pose(*pose)
        for action in actions:
            moved = apply_action(moved, action, self.size, self.walls)[0]
        return pose_key(moved)

    def path_to(self, start: PoseKey, goal: Cell | PoseKey, actions: Sequence[str]) -> str | None:
        """The first action of a cheapest path (ACTION_COST: walking forward, so the way is seen) from
        `start` to the pose `goal`, or to any pose at the cell `goal` (a 3-tuple); None if unreachable."""
        walk = self._walk(start, actions)
        return next((first_action for _, pose, first_action, _ in walk if pose[: len(goal)] == goal), None)


KEEP_SHARE = 0.75  # the current goal is kept while worth this share of the best


def utility(gain: float, distance: float) -> float:
    return gain / (distance + DISTANCE_OFFSET)


def cell_distance(a: Place, b: Place) -> int:
    """Cells apart (by the grid, not the path) of two cells or poses."""
    return sum(abs(p - q) for p, q in zip(a[:3], b[:3]))


def pose_key(pose: Pose) -> PoseKey:
    return pose.x, pose.y, pose.z, pose.facing, pose.pitch


def _insert(found: list[Goal], goal: Goal, limit: int) -> list[Goal]:
    """`found` with `goal` added, sorted best first, without a worse goal near a better one."""
    near = [g for g in found if _close(g.cell, goal.cell)]
    if any(g.utility >= goal.utility for g in near):
        return found
    kept = [g for g in found if g not in near] + [goal]
    kept.sort(key=lambda g: (-g.utility, g.cost))
    return kept[:limit]


def _close(a: Cell, b: Cell) -> bool:
    return cell_distance(a, b) <= 2
