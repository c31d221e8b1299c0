"""The full-knowledge reference team, and how close the offline explorer comes to it.

A reference, not a decision policy: each agent knows every wall and object and,
each step, takes the first move of a shortest path (breadth-first over poses)
to the nearest pose that sees an object the team has not seen, leaving to a
lower-numbered teammate the object it is already heading for. It starts from
the same poses as a run (the same placement by seed) and, like a run, counts
an object found at the step whose observation shows it.

    python bench/full_knowledge.py            # prints the table, writes bench/full_knowledge.json

compares it, world by world and seed by seed, with real runs of the product's
2-agent offline team: the steps each needed to see 90% of the objects.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import statistics
import sys
import tempfile
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.config import RunConfig  # noqa: E402
from explorer.runner import ExplorationRun  # noqa: E402
from explorer.team.store import InProcessStore  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.geometry import apply_action  # noqa: E402
from perception.mock import MockPerception  # noqa: E402
from perception.world import SHIPPED_WORLDS, load_world  # noqa: E402

MOVES = ("forward", "backward", "move_left", "move_right", "move_up", "move_down",
         "look_left", "look_right", "look_up", "look_down")
SHARE = 90  # percent of the objects
MAX_STEPS = 400


def full_knowledge_steps(world, agents, seed, share=SHARE):
    """The step at which the reference team had seen `share`% of the objects."""
    agent_ids = [f"Agent{i}" for i in range(1, agents + 1)]
    poses = dict(MockPerception(world, InProcessStore(), agent_ids, seed)._poses)
    wanted = math.ceil(len(world.objects) * share / 100)
    views = {}

    def seen_from(pose):
        key = (pose.x, pose.y, pose.z, pose.facing, pose.pitch)
        if key not in views:
            views[key] = frozenset(world.view(pose)[0])
        return views[key]

    found = set()
    for step in range(1, MAX_STEPS + 1):
        for agent_id in agent_ids:
            found |= seen_from(poses[agent_id])
        if len(found) >= wanted:
            return step
        claimed = set()
        for agent_id in agent_ids:
            action, target = _first_move(poses[agent_id], found | claimed, seen_from, world)
            claimed |= target
            if action:
                poses[agent_id] = apply_action(poses[agent_id], action, world.size, world.walls)[0]
    return None


def _first_move(start, known, seen_from, world):
    """(first action, objects it leads to) on a shortest path to a pose that sees an unknown object."""
    first = {start: None}
    queue = deque([start])
    while queue:
        pose = queue.popleft()
        new = seen_from(pose) - known
        if new and pose != start:
            return first[pose], new
        for action in MOVES:
            after, outcome, _ = apply_action(pose, action, world.size, world.walls)
            if outcome in ("moved", "turned") and after not in first:
                first[after] = first[pose] or action
                queue.append(after)
    return None, frozenset()


def offline_steps(world_path, agents, seed, embedder, share=SHARE):
    """The step at which a real run of the offline team had seen `share`% of the objects."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        config = RunConfig(world=world_path, agents=agents, seed=seed, steps=MAX_STEPS // 2,
                           run_dir=Path(tmp) / "run", verbosity=-1).check()
        summary = ExplorationRun(config, embedder=embedder).execute()
    return summary["team"]["steps_to_objects"][f"{share}%"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 42])
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "full_knowledge.json")
    args = parser.parse_args()
    embedder = SentenceEmbedder()
    rows = []
    for path in sorted(SHIPPED_WORLDS.glob("*.yaml")):
        world = load_world(path)
        for seed in args.seeds:
            reference = full_knowledge_steps(world, args.agents, seed)
            offline = offline_steps(path, args.agents, seed, embedder)
            ratio = offline / reference if offline and reference else None
            rows.append({"world": path.stem, "seed": seed, "full_knowledge": reference, "offline": offline, "ratio": ratio})
            print(f"{path.stem:10} seed {seed:3}: full knowledge {reference}, offline {offline}, ratio {ratio and round(ratio, 2)}")
    per_world = {}
    for row in rows:
        per_world.setdefault(row["world"], []).append(row["ratio"])
    summary = {
        "agents": args.agents,
        "share": SHARE,
        "rows": rows,
        "geometric_mean_ratio_per_world": {w: round(statistics.geometric_mean(r), 3) for w, r in per_world.items() if None not in r},
        "geometric_mean_ratio": round(statistics.geometric_mean([r["ratio"] for r in rows if r["ratio"]]), 3),
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=2))
    args.out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
