"""Does a sweep on Ray keep up with local processes? `python bench/sweep_ray.py` writes bench/sweep_ray.json.

The same sweep of short runs (2 agents, 5 steps, the agents placed by the seed) twice: with `--parallel 2`
as local processes, and with `--executor ray --parallel 2` on a Ray cluster of two nodes on this machine (a
head and a worker node, one CPU each, started before the timing, as a cluster is there before a sweep joins
it). Target: the Ray sweep within 1.2x the local sweep's wall time, with the same results run for run
(results.csv but the runs' wall times). Each sweep runs `--repeats` times, into a new `out` each time, and the
fastest counts: the machine may be shared. Needs the extra `cluster` (pip install -e '.[cluster]').
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from harness.sweeps import read_results, sweep, write_sweep  # noqa: E402

TARGET = 1.2  # the Ray sweep's wall time over the local one's, at most
SWEEP = """\
out: {out}
grid:
  seed: {seeds}
fixed:
  agents: 2
  steps: 5
  random-starts: true
"""
TIMINGS = ("wall_seconds",)


def timed_sweeps(
    directory: Path, name: str, seeds: list[int], repeats: int, *args: str, env: dict[str, str] | None = None
) -> list[float]:
    """The wall times of `repeats` sweeps `main.py --sweep FILE --parallel 2 ARGS` into directory/NAME-i,
    each of which must succeed."""
    seconds = []
    for repeat in range(1, repeats + 1):
        sweep_file = write_sweep(
            directory, SWEEP.format(out=directory / f"{name}-{repeat}", seeds=seeds), f"{name}.yaml"
        )
        started = time.perf_counter()
        result = sweep(sweep_file, "--parallel", "2", *args, env=env)
        seconds.append(round(time.perf_counter() - started, 2))
        if result.returncode != 0:
            sys.exit(f"sweep_ray.py: the {name} sweep failed: {result.stderr.strip()}")
    return seconds


def figures(runs: int, repeats: int, directory: Path) -> dict:
    from ray.cluster_utils import Cluster

    def results(out):
        return [{k: v for k, v in row.items() if k not in TIMINGS} for row in read_results(directory / out)]

    seeds = list(range(1, runs + 1))
    local = timed_sweeps(directory, "local", seeds, repeats)
    started = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        cluster.add_node(num_cpus=1)
        cluster_start = round(time.perf_counter() - started, 2)
        environment = {**os.environ, "RAY_ADDRESS": cluster.address, "RAY_USAGE_STATS_ENABLED": "0"}
        on_ray = timed_sweeps(directory, "ray", seeds, repeats, "--executor", "ray", env=environment)
    finally:
        cluster.shutdown()
    attempts = (directory / "ray-1" / ".sweep" / "ray-attempts.jsonl").read_text().splitlines()
    per_node = collections.Counter(json.loads(line)["node"] for line in attempts)
    ratio = round(min(on_ray) / min(local), 3)
    identical = all(
        results(f"{name}-{repeat}") == results("local-1")
        for name in ("local", "ray")
        for repeat in range(1, repeats + 1)
    )
    return {
        "command": command_line("sweep_ray.py"),
        "runs": runs,
        "run": {"agents": 2, "steps": 5, "random_starts": True},
        "cores": os.cpu_count(),
        "local_parallel_2_seconds": local,
        "ray_two_nodes_seconds": on_ray,
        "cluster_start_seconds": cluster_start,
        "ratio": ratio,
        "target": TARGET,
        "within_target": ratio <= TARGET,
        "identical_results": identical,
        "runs_per_node": sorted(per_node.values(), reverse=True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24, help="runs in each sweep (default 24)")
    parser.add_argument(
        "--repeats", type=int, default=2, help="times each sweep runs, the fastest counting (default 2)"
    )
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "sweep_ray.json", help="figures file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        result = figures(args.runs, args.repeats, Path(directory))
    write_figures(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
