"""The built-in explorer: the default decision policy, needing no model and no network.

It reads the same context the prompt is made from (and not the prompt). It keeps a map of
what it believes: the cells it has seen, the walls it has met, and the cells
its teammates have probably seen (their poses are in the context). Each step
it takes the action that reveals the most unseen cells; when nothing is to
be gained where it stands, it walks towards the best vantage point, away
from its teammates. Its map only grows by set unions keyed on what the
context says, so a retried call gives the same answer.
"""

from __future__ import annotations

import random
from collections import deque

from nodes.interfaces import Decision, DecisionOutcome
from perception.actions import safe_action
from perception.base import FACING_VECTORS, Pose, turn
from perception.geometry import apply_action, sight, step_offset

TEAMMATE_RADIUS = 4  # vantage points this close to a teammate are left to it
TEAMMATE_PENALTY = 2.0
MOVE_ACTIONS = ("forward", "backward", "move_left", "move_right", "move_up", "move_down")


class OfflineExplorer:
    name = "offline"

    def __init__(self, seed):
        self.seed = seed
        self.seen: set[tuple[int, int, int]] = set()
        self.seen_by_others: set[tuple[int, int, int]] = set()
        self.walls: set[tuple[int, int]] = set()
        # Cells a pose was expected to show but did not (hidden by walls not
        # yet met): never expected from that pose again.
        self.hidden: dict[tuple, set[tuple[int, int, int]]] = {}

    def decide(self, prompt, context):
        return DecisionOutcome(self.choose(context))

    def choose(self, context) -> Decision:
        available = context["available_actions"]
        if not context["size"]:
            return Decision(safe_action(available), "I do not know the world's extent.", "scan around")
        pose = Pose.from_dict(context["pose"])
        self._learn(context, pose)
        message = self._news(context, pose)
        rng = random.Random(f"{self.seed}:{context['step']}")

        # Ground a teammate has probably seen is left to it; but its sight is
        # only estimated (with the walls I know of), so once nothing else is
        # left, that ground is checked too.
        for unseen in (self._unseen(context["size"], self.seen_by_others), self._unseen(context["size"], ())):
            gains = {a: self._gain(self._after(pose, a, context), unseen, context) for a in available}
            best = max(gains.values(), default=0)
            if best > 0:
                break
            action, target = self._head_for_vantage(pose, unseen, context, available)
            if action is not None:
                return Decision(
                    action,
                    f"Nothing new from here; the best vantage point is ({target[0]}, {target[1]}, {target[2]}).",
                    "walk towards unexplored ground, away from teammates",
                    message,
                )
        if best > 0:
            # Among equal gains, look away from teammates; the seeded coin decides the rest.
            others = _teammate_cells(context)
            tied = [a for a in available if gains[a] == best]
            crowding = {a: self._crowding(_focus(self._after(pose, a, context), context), others) for a in tied}
            choices = [a for a in tied if crowding[a] == min(crowding.values())]
            action = choices[0] if len(choices) == 1 else rng.choice(choices)
            return Decision(
                action,
                f"{len(unseen)} cells I have not seen yet; {action} reveals {best} of them.",
                "look at unseen ground",
                message,
            )
        return Decision(safe_action(available), "Everything within reach has been seen.", "keep scanning", message)

    def _learn(self, context, pose):
        seen_now = set(map(tuple, context["seen_cells"]))
        self.seen.update(seen_now)
        self.walls.update(map(tuple, context["seen_walls"]))
        self.hidden.setdefault(_view_key(pose), set()).update(set(self._sight(pose, context)) - seen_now)
        last = context["recent_actions"][-1] if context["recent_actions"] else None
        if last and last["outcome"] == "blocked" and last["action"] in MOVE_ACTIONS:
            dx, dy, dz = step_offset(pose, last["action"])
            x, y = pose.x + dx, pose.y + dy
            width, depth, _ = context["size"]
            if dz == 0 and 0 <= x < width and 0 <= y < depth:
                self.walls.add((x, y))
        for other in context["other_agents"].values():
            if other:
                self.seen_by_others.update(self._sight(Pose.from_dict(other), context))

    def _unseen(self, size, left_to_others):
        width, depth, height = size
        return {
            (x, y, z)
            for x in range(width)
            for y in range(depth)
            if (x, y) not in self.walls
            for z in range(height)
        } - self.seen - set(left_to_others)

    def _sight(self, pose, context):
        return sight(pose, context["view_distance"], context["size"], self.walls)[0]

    def _after(self, pose, action, context):
        """The pose an action leads to, or None if it would show nothing new."""
        new_pose, outcome, _ = apply_action(pose, action, context["size"], self.walls)
        if outcome not in ("moved", "turned") or _view_key(new_pose) == _view_key(pose):
            return None  # blocked, or only a roll, which changes nothing seen
        return new_pose

    def _gain(self, pose, unseen, context):
        if pose is None:
            return 0
        hidden = self.hidden.get(_view_key(pose), ())
        return sum(1 for cell in self._sight(pose, context) if cell in unseen and cell not in hidden)

    def _vantage_gain(self, cell, unseen, context):
        x, y, z = cell
        return max(
            self._gain(Pose(x, y, z, facing, pitch), unseen, context)
            for facing in FACING_VECTORS
            for pitch in (-1, 0, 1)
        )

    def _head_for_vantage(self, pose, unseen, context, available):
        """First action on the way to the cell with the best gain for its distance."""
        if not unseen:
            return None, None
        start = pose.cell
        max_gain = 1 + sum(2 * f + 1 for f in range(1, context["view_distance"] + 1))
        others = _teammate_cells(context)
        first_step = {start: None}
        queue = deque([(start, 0)])
        best, best_utility = None, float("-inf")
        while queue:
            cell, distance = queue.popleft()
            if max_gain - distance <= best_utility:
                break  # nothing farther can beat the best so far
            if cell != start:
                gain = self._vantage_gain(cell, unseen, context)
                if gain:
                    utility = gain - distance - self._crowding(cell, others)
                    if utility > best_utility:
                        best, best_utility = cell, utility
            for neighbour in self._neighbours(cell, context["size"]):
                if neighbour not in first_step:
                    first_step[neighbour] = first_step[cell] or neighbour
                    queue.append((neighbour, distance + 1))
        if best is None:
            return None, None
        return self._action_towards(pose, first_step[best], available), best

    def _neighbours(self, cell, size):
        width, depth, height = size
        x, y, z = cell
        for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
            nx, ny, nz = x + dx, y + dy, z + dz
            if 0 <= nx < width and 0 <= ny < depth and 0 <= nz < height and (nx, ny) not in self.walls:
                yield nx, ny, nz

    @staticmethod
    def _crowding(cell, others):
        penalty = 0.0
        for ox, oy, oz in others:
            distance = abs(cell[0] - ox) + abs(cell[1] - oy) + abs(cell[2] - oz)
            penalty += TEAMMATE_PENALTY * max(0, TEAMMATE_RADIUS - distance)
        return penalty

    @staticmethod
    def _action_towards(pose, next_cell, available):
        """Face the way to go, then walk: walking forwards shows what lies ahead."""
        dx, dy, dz = (n - c for n, c in zip(next_cell, pose.cell))
        if dz:
            action = "move_up" if dz > 0 else "move_down"
        elif FACING_VECTORS[pose.facing] == (dx, dy):
            action = "forward"
        else:
            action = "look_left" if FACING_VECTORS[turn(pose.facing, -1)] == (dx, dy) else "look_right"
        return action if action in available else safe_action(available)

    @staticmethod
    def _news(context, pose):
        if not context["comm_enabled"]:
            return ""
        new = [name for name in context["visible_objects"] if name not in context["team_objects"]]
        if not new:
            return ""
        return f"I found {', '.join(new)} near ({pose.x}, {pose.y}, {pose.z}), looking {pose.facing}."


def _view_key(pose):
    """What decides a view: everything in a pose but the roll."""
    return pose.x, pose.y, pose.z, pose.facing, pose.pitch


def _teammate_cells(context):
    return [tuple(p["position"]) for p in context["other_agents"].values() if p]


def _focus(pose, context):
    """The cell a pose looks at: half its sight ahead."""
    dx, dy = FACING_VECTORS[pose.facing]
    ahead = (context["view_distance"] + 1) // 2
    return pose.x + ahead * dx, pose.y + ahead * dy, pose.z + pose.pitch
