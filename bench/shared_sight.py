"""How much could a coordinator win by what it knows? `python bench/shared_sight.py` prints the ratio and
writes bench/shared_sight.json.

A coordinator's edge over the explorers is its picture: every explorer's
exact view, every step (bench/coordination.py). Here the explorers get that
picture themselves, at once and for nothing: before each step, each
explorer's map takes in every cell and wall any teammate saw at an earlier
step (no messages, no delay, no loss). The steps to 90% of the objects of
such a team, over those of the same explorers alone (messages on, msg_delay
0, on the event schedule, as in bench/coordination.py), bound what a
coordinator can win by information on these worlds; the rest would have to
come from better plans than the explorers' own.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.coordination import SHARE, STEPS, steps_to_share  # noqa: E402
from bench.exploration import geometric_mean, seeded_world  # noqa: E402
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.policies.offline import OfflineExplorer  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402


class TeamSight:
    """What the explorers of one run saw, by step: {step: (cells, walls)}."""

    def __init__(self):
        self.by_step: dict[int, tuple[set, set]] = {}

    def add(self, step, cells, walls):
        seen, met = self.by_step.setdefault(step, (set(), set()))
        seen.update(map(tuple, cells))
        met.update(map(tuple, walls))

    def before(self, step):
        """Every cell and wall seen at an earlier step: the same whatever order this step's explorers run in."""
        earlier = [entry for at, entry in list(self.by_step.items()) if at < step]
        return set().union(*(c for c, _ in earlier)), set().union(*(w for _, w in earlier))


class SharedSightExplorer(OfflineExplorer):
    """The built-in explorer, whose map also takes in all that its teammates saw before this step."""

    def __init__(self, team_sight):
        super().__init__()
        self.team_sight = team_sight

    def observe(self, context):
        self.team_sight.add(context.team.step, context.view.seen_cells, context.view.seen_walls)
        pose = super().observe(context)
        cells, walls = self.team_sight.before(context.team.step)
        self.map.learn_seen(cells)
        for wall in walls:
            self.map.add_wall(wall)
        return pose


def shared_sight_policies():
    """A policy factory for one run: SharedSightExplorers over one TeamSight."""
    team_sight = TeamSight()
    return lambda *_: SharedSightExplorer(team_sight)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 42, *range(4, 12)])
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "shared_sight.json")
    args = parser.parse_args()
    embedder = SentenceEmbedder()
    rows, started = [], time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        for path in sorted(SHIPPED_WORLDS.glob("*.yaml")):
            world_path = seeded_world(path, directory)
            for seed in args.seeds:
                alone, _ = steps_to_share(world_path, seed, 0, False, embedder, directory)
                shared, _ = steps_to_share(
                    world_path,
                    seed,
                    0,
                    False,
                    embedder,
                    directory,
                    policy_factory=shared_sight_policies(),
                )
                rows.append(
                    {
                        "world": path.stem,
                        "seed": seed,
                        "alone": alone,
                        "shared_sight": shared,
                        "ratio": round((shared or STEPS + 1) / (alone or STEPS + 1), 3),
                    }
                )
                print(f"{path.stem:10} seed {seed:3}: alone {alone}  with the team's sight {shared}", flush=True)
    worlds = list(dict.fromkeys(r["world"] for r in rows))
    per_world = {w: geometric_mean([r["ratio"] for r in rows if r["world"] == w]) for w in worlds}
    summary = {
        "share": SHARE,
        "seeds": args.seeds,
        "rows": rows,
        "per_world": per_world,
        "shared_sight_over_alone": geometric_mean(list(per_world.values())),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    print(
        f"with the team's sight / alone (geometric mean over seeds, then worlds): "
        f"{summary['shared_sight_over_alone']:.3f}x"
    )
    write_figures(args.out, summary)


if __name__ == "__main__":
    main()
