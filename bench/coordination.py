"""Does a coordinator help, and what does a radio delay cost? `python bench/coordination.py` prints the
table and writes bench/coordination.json.

For each shipped world and seed, 3 offline explorers run on the event-driven
schedule (`--schedule event`) with every agent's `msg_delay` set to 0, 1, 3
and 10 simulated seconds (a profiles file's `default` section, which the
coordinator takes too), without and with the offline coordinator
(`--coordinator offline`, ticking every 5 seconds). Each run is a real run of
the product (real embeddings, the real team store, each step traced); the
figure is the steps to 90% of the objects. Agents are placed by the seed, as
in bench/exploration.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import geometric_mean, seeded_world  # noqa: E402
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.run.policy_factory import make_policy  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402

SHARE = 90  # percent of the objects
AGENTS = 3
DELAYS = (0, 1, 3, 10)
STEPS = 150  # every team here reaches 90% well within it; one that does not counts as STEPS + 1, a lower bound


def steps_to_share(world_path, seed, delay, coordinator, embedder, directory, policy_factory=make_policy):
    """(steps to SHARE% of the objects, or None; the run's summary)."""
    profiles = Path(directory) / f"delay{delay}.yaml"
    profiles.write_text(f"default: {{msg_delay: {delay}}}\n")
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        config = RunConfig.of(
            world=world_path,
            agents=AGENTS,
            seed=seed,
            steps=STEPS,
            run_dir=Path(tmp) / "run",
            verbosity=-1,
            schedule="event",
            profiles=profiles,
            coordinator="offline" if coordinator else None,
        ).check()
        summary = ExplorationRun(config, embedder=embedder, policy_factory=policy_factory).execute()
    return summary["team"]["steps_to_objects"][f"{SHARE}%"], summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 42])
    shipped = sorted(SHIPPED_WORLDS.glob("*.yaml"))
    parser.add_argument("--worlds", nargs="+", choices=[p.stem for p in shipped], help="(default: all)")
    parser.add_argument("--delays", type=float, nargs="+", default=list(DELAYS))
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "coordination.json")
    args = parser.parse_args()
    paths = [p for p in shipped if not args.worlds or p.stem in args.worlds]
    embedder = SentenceEmbedder()
    rows, started = [], time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        for path in paths:
            world_path = seeded_world(path, directory)
            for seed in args.seeds:
                for delay in args.delays:
                    row = {"world": path.stem, "seed": seed, "msg_delay": delay}
                    for coordinator in (False, True):
                        reached, summary = steps_to_share(world_path, seed, delay, coordinator, embedder, directory)
                        key = "coordinator" if coordinator else "alone"
                        row[key] = {
                            "steps": reached,
                            "reached": reached is not None,
                            "messages_per_agent_step": summary["team"]["messages_per_agent_step"],
                            "directives": summary["coordinator"],
                        }
                    row["ratio"] = round(
                        (row["coordinator"]["steps"] or STEPS + 1) / (row["alone"]["steps"] or STEPS + 1), 3
                    )
                    rows.append(row)
                    print(
                        f"{path.stem:10} seed {seed:3} msg_delay {delay:4g}: alone {row['alone']['steps']}  "
                        f"with coordinator {row['coordinator']['steps']}",
                        flush=True,
                    )
    table = {}
    for delay in args.delays:
        chosen = [r for r in rows if r["msg_delay"] == delay]
        table[str(delay)] = {
            "alone_mean_steps": round(statistics.mean(r["alone"]["steps"] or STEPS + 1 for r in chosen), 2),
            "coordinator_mean_steps": round(statistics.mean(r["coordinator"]["steps"] or STEPS + 1 for r in chosen), 2),
            # Per world, the geometric mean over seeds of coordinator/alone; then over worlds.
            "coordinator_over_alone": geometric_mean(
                [
                    geometric_mean([r["ratio"] for r in chosen if r["world"] == world])
                    for world in dict.fromkeys(r["world"] for r in chosen)
                ]
            ),
        }
    summary = {
        "share": SHARE,
        "agents": AGENTS,
        "seeds": args.seeds,
        "steps_run": STEPS,
        "rows": rows,
        "by_delay": table,
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    print(markdown_table(summary))
    write_figures(args.out, summary)


def markdown_table(summary):
    """The table in docs/performance.md: mean steps to 90% of the objects by msg_delay, without and with the coordinator."""
    lines = [
        "| msg_delay (s) | 3 explorers alone | with the offline coordinator | coordinator / alone (geometric mean) |",
        "|---|---|---|---|",
    ]
    for delay, row in summary["by_delay"].items():
        lines.append(
            f"| {float(delay):g} | {row['alone_mean_steps']:.1f} | {row['coordinator_mean_steps']:.1f} | "
            f"{row['coordinator_over_alone']:.3f}x |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
