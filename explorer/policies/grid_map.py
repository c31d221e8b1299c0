"""What an agent knows of a grid world, and the planner that walks it there.

The map grows only by set unions keyed on what the context says, so reading
the same context twice changes nothing. Poses are tuples (x, y, z, facing,
pitch): everything that decides a view (roll changes nothing seen).

The planner searches poses breadth-first, one step per action, over the walls
known so far (unknown ground is taken to be free), and values a pose by the
unseen cells it would show, less a cost per step of travel: the rule of
utility-versus-travel-cost frontier exploration (Burgard et al. 2005): a
goal's worth is its unseen cells per step of the way, so a peek into the
opening it is passing beats the corridor's far end, which stays there.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

from perception.base import FACING_VECTORS, Pose, turn
from perception.geometry import CLIMBS, STEP_TURNS, TURNS, apply_action, sight

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
ACTION_COST.update({a: 1.0 for a in ("move_up", "move_down", "look_left", "look_right", "look_up", "look_down")})


@dataclass(frozen=True)
class Goal:
    """A pose worth reaching: what it would show, how far it is, and the first action there."""

    pose: tuple
    gain: float  # unseen cells it would show, teammates' ground weighted down
    new_cells: int  # unseen cells it would show
    cost: float  # of the way there, as the planner counts it (ACTION_COST)
    steps: int  # actions to get there
    first_action: str | None

    @property
    def utility(self):
        return utility(self.gain, self.cost)

    @property
    def cell(self):
        return self.pose[:3]


class GridMap:
    def __init__(self):
        self.size = None
        self.view_distance = 0
        self.seen: set[tuple[int, int, int]] = set()
        self.walls: set[tuple[int, int]] = set()
        self.open: set[tuple[int, int]] = set()  # (x, y) of the cells seen free
        self.wall_log: list[tuple[int, int]] = []  # walls in the order met, for the sight cache
        # Cells a pose was expected to show but did not (hidden by walls not
        # yet met): never expected from that pose again.
        self.hidden: dict[tuple, set] = {}
        self.teammates_ground: set[tuple[int, int, int]] = set()  # cells teammates said they covered
        self._sights: dict[tuple, tuple[int, frozenset]] = {}  # pose -> (len(wall_log) then, cells)

    # What the agent learns

    def learn(self, context):
        return self.learn_view(context["size"], context["view_distance"], context["pose"], context["seen_cells"],
                               context["seen_walls"])

    def learn_view(self, size, view_distance, pose, seen_cells, seen_walls):
        """Learn what one view showed: the cells seen from `pose` (a pose dict); returns the pose as a map key."""
        self.size = tuple(size)
        self.view_distance = view_distance
        pose = pose_key(Pose.from_dict(pose))
        seen_now = set(map(tuple, seen_cells))
        self.seen.update(seen_now)
        self.open.update(cell[:2] for cell in seen_now)
        for wall in map(tuple, seen_walls):
            self.add_wall(wall)
        self.hidden.setdefault(pose, set()).update(self.sight(pose) - seen_now)
        return pose

    def add_wall(self, cell):
        if cell not in self.walls:
            self.walls.add(cell)
            self.wall_log.append(cell)

    def in_grid(self, x, y):
        return 0 <= x < self.size[0] and 0 <= y < self.size[1]

    # What a pose shows

    def sight(self, pose) -> frozenset:
        """The cells `pose` would show, with the walls known so far; cached until a wall near it is met."""
        cached = self._sights.get(pose)
        if cached is not None:
            version, cells = cached
            reach = self.view_distance
            if all(abs(wx - pose[0]) > reach or abs(wy - pose[1]) > reach for wx, wy in self.wall_log[version:]):
                self._sights[pose] = (len(self.wall_log), cells)
                return cells
        cells = frozenset(sight(Pose(*pose), self.view_distance, self.size, self.walls)[0])
        self._sights[pose] = (len(self.wall_log), cells)
        return cells

    def unseen(self, cells, pose=None):
        """Of `cells`, those not seen yet (nor known to be hidden from `pose`)."""
        hidden = self.hidden.get(pose, ()) if pose else ()
        return [cell for cell in cells if cell not in self.seen and cell not in hidden]

    def gain(self, pose, claimed=frozenset(), theirs=frozenset()):
        """(worth, unseen cells) of what `pose` would show; `claimed` cells are worth TEAM_WEIGHT,
        `theirs` (nearer a teammate) REGION_WEIGHT."""
        new = self.unseen(self.sight(pose), pose)
        others = self.teammates_ground
        worth = sum(
            TEAM_WEIGHT if cell in others or cell in claimed else REGION_WEIGHT if cell in theirs else 1.0
            for cell in new
        )
        return worth, len(new)

    def distances(self, starts):
        """Steps from the nearest of the cells `starts` to every cell reachable over the walls known so
        far (moves only): one pass however many starts, so a team of any size costs the same."""
        width, depth, height = self.size
        distance = dict.fromkeys(starts, 0)
        queue = deque(distance)
        while queue:
            x, y, z = cell = queue.popleft()
            for nx, ny, nz in ((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1), (x, y, z - 1)):
                if (nx, ny, nz) not in distance and self.in_grid(nx, ny) and 0 <= nz < height and (nx, ny) not in self.walls:
                    distance[(nx, ny, nz)] = distance[cell] + 1
                    queue.append((nx, ny, nz))
        return distance

    # Where to go

    def neighbours(self, pose, actions):
        """(action, pose) for each action that would change the view, over the walls known so far."""
        x, y, z, facing, pitch = pose
        width, depth, height = self.size
        for action in actions:
            if action in STEP_TURNS:
                dx, dy = FACING_VECTORS[turn(facing, STEP_TURNS[action])]
                if self.in_grid(x + dx, y + dy) and (x + dx, y + dy) not in self.walls:
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

    def goals(self, start, actions, claimed=frozenset(), theirs=frozenset(), limit=1, keep=None):
        """The `limit` best goals, best first, no two within a few cells of each other.

        `claimed` and `theirs` are cells worth less (see gain). `keep` is a pose whose
        goal is returned as well if it is still worth anything (the current goal, so
        that it is not dropped for a near tie).
        """
        max_gain = 1 + sum(2 * ahead + 1 for ahead in range(1, self.view_distance + 1))
        settled = set()
        queue = [(0.0, 0, start, None, 0)]  # (planning cost, order pushed, pose, first action, steps)
        pushed = 0
        found: list[Goal] = []
        kept = None
        while queue:
            cost, _, pose, first_action, steps = heapq.heappop(queue)
            if pose in settled:
                continue
            settled.add(pose)
            floor = found[-1].utility if len(found) >= limit else float("-inf")
            if keep is not None and kept is None:
                floor *= KEEP_SHARE  # the current goal counts if it is nearly the best
            if utility(max_gain, cost) <= floor:
                break  # nothing farther can be among the best
            if pose != start:
                worth, new = self.gain(pose, claimed, theirs)
                if new and worth > 0:
                    goal = Goal(pose, worth, new, cost, steps, first_action)
                    if pose == keep:
                        kept = goal
                    found = _insert(found, goal, limit)
            for action, after in self.neighbours(pose, actions):
                if after not in settled:
                    pushed += 1
                    heapq.heappush(queue, (cost + ACTION_COST[action], pushed, after, first_action or action, steps + 1))
        return found, kept

    def predict(self, pose, actions):
        """Where `actions` take the pose, over the walls known so far."""
        moved = Pose(*pose)
        for action in actions:
            moved = apply_action(moved, action, self.size, self.walls)[0]
        return pose_key(moved)

    def path_to(self, start, goal, actions):
        """The first action of a cheapest path (ACTION_COST: walking forward, so the way is seen) from
        `start` to the pose `goal`, or to any pose at the cell `goal` (a 3-tuple); None if unreachable."""
        settled = set()
        queue = [(0.0, 0, start, None)]  # (cost, order pushed, pose, first action)
        pushed = 0
        while queue:
            cost, _, pose, first_action = heapq.heappop(queue)
            if pose in settled:
                continue
            settled.add(pose)
            if pose[: len(goal)] == goal:
                return first_action
            for action, after in self.neighbours(pose, actions):
                if after not in settled:
                    pushed += 1
                    heapq.heappush(queue, (cost + ACTION_COST[action], pushed, after, first_action or action))
        return None


KEEP_SHARE = 0.75  # the current goal is kept while worth this share of the best


def utility(gain, distance):
    return gain / (distance + DISTANCE_OFFSET)


def cell_distance(a, b):
    """Cells apart (by the grid, not the path) of two cells or poses."""
    return sum(abs(p - q) for p, q in zip(a[:3], b[:3]))


def pose_key(pose: Pose):
    return pose.x, pose.y, pose.z, pose.facing, pose.pitch


def _insert(found, goal, limit):
    """`found` with `goal` added, sorted best first, without a worse goal near a better one."""
    near = [g for g in found if _close(g.cell, goal.cell)]
    if any(g.utility >= goal.utility for g in near):
        return found
    kept = [g for g in found if g not in near] + [goal]
    kept.sort(key=lambda g: (-g.utility, g.cost))
    return kept[:limit]


def _close(a, b):
    return cell_distance(a, b) <= 2
