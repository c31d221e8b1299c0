"""The full-knowledge reference team: what the team could do if it knew the map.

A reference for bench/exploration.py, not a decision policy: each agent knows every wall and object and,
each step, takes the first move of a shortest path (breadth-first over poses)
to the nearest pose that sees an object the team has not seen, leaving to a
lower-numbered teammate the object it is already heading for. It starts from
the same poses as a run (the same placement by seed) and, like a run, counts
an object found at the step whose observation shows it.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.team.store import InProcessStore  # noqa: E402
from perception.actions import ACTIONS  # noqa: E402
from perception.geometry import apply_action  # noqa: E402
from perception.mock import MockPerception  # noqa: E402

MOVES = tuple(action for action in ACTIONS if not action.startswith("tilt"))  # a roll shows nothing new
SHARE = 90  # percent of the objects
MAX_STEPS = 400


def full_knowledge_steps(world, agents, seed, share=SHARE):
    """The step at which the reference team had seen `share`% of the objects."""
    return full_knowledge_curve(world, agents, seed, (share,))[share]


def full_knowledge_curve(world, agents, seed, shares):
    """{share: the step at which the reference team had seen `share`% of the objects, or None}."""
    return {share: steps for share, (steps, _) in full_knowledge_reach(world, agents, seed, shares).items()}


def full_knowledge_reach(world, agents, seed, shares, of="objects"):
    """{share: (the step at which the reference team had seen `share`% of the objects, or of the free cells
    (`of="cells"`), the cells its agents had moved by then), or (None, None)}. For cells, each agent goes to
    the nearest pose that shows a cell the team has not seen."""
    agent_ids = [f"Agent{i}" for i in range(1, agents + 1)]
    poses = dict(MockPerception(world, InProcessStore(), agent_ids, seed)._poses)
    total = len(world.objects) if of == "objects" else world.free_cell_count
    wanted = {share: math.ceil(total * share / 100) for share in shares}
    reached = dict.fromkeys(shares, (None, None))
    seen_from, moves_from = _views(world, 0 if of == "objects" else 1), _move_table(world)
    found, distance = set(), 0
    for step in range(1, MAX_STEPS + 1):
        for agent_id in agent_ids:
            found |= seen_from(poses[agent_id])
        for share in shares:
            if reached[share][0] is None and len(found) >= wanted[share]:
                reached[share] = (step, distance)
        if all(steps is not None for steps, _ in reached.values()):
            break
        claimed: set = set()
        for agent_id in agent_ids:
            action, target, after = _first_move(poses[agent_id], found | claimed, seen_from, moves_from)
            claimed |= target
            if action:
                distance += after.cell != poses[agent_id].cell
                poses[agent_id] = after
    return reached


def _views(world, part):
    """pose -> what it shows of the world (`part` 0: the objects; 1: the free cells), each worked out once."""
    views = {}

    def seen_from(pose):
        key = (pose.x, pose.y, pose.z, pose.facing, pose.pitch)
        if key not in views:
            views[key] = frozenset(world.view(pose)[part])
        return views[key]

    return seen_from


def _move_table(world):
    """pose -> ((action, pose after), ...), each worked out once: the walls never change."""
    moves = {}

    def moves_from(pose):
        if pose not in moves:
            moves[pose] = tuple(_moves(pose, world))
        return moves[pose]

    return moves_from


def _moves(pose, world):
    """(action, pose after) for each move that changes the pose."""
    for action in MOVES:
        after, outcome, _ = apply_action(pose, action, world.size, world.walls)
        if outcome in ("moved", "turned"):
            yield action, after


def _first_move(start, known, seen_from, moves_from):
    """(first action, objects it leads to, the pose it takes the agent to) on a shortest path to a pose
    that sees an unknown object."""
    first = {start: None}
    queue = deque([start])
    while queue:
        pose = queue.popleft()
        new = seen_from(pose) - known
        if new and pose != start:
            action = first[pose]
            return action, new, dict(moves_from(start))[action]
        for action, after in moves_from(pose):
            if after not in first:
                first[after] = first[pose] or action
                queue.append(after)
    return None, frozenset(), start
