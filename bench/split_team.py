"""What a team split across processes costs: `python bench/split_team.py` prints the table and writes
bench/split_team.json.

16 offline agents in mock mode (real embeddings) explore the office world for
STEPS steps: in one process with the in-process store, then on a Redis store
(a local redis-server this script starts) in 1, 2 and 4 processes of 16, 8
and 4 agents, each a real `python main.py`. The figures are agent-steps per
second over the exploration (the slowest process's wall time, from its first
step to its end) and the time a step commit's change to the store takes
(median and 90th percentile, over the processes' commits). Needs `redis-server`
(apt-get install redis-server).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import figures_path, write_figures  # noqa: E402
from harness.redis_process import RedisServer  # noqa: E402

AGENTS = 16
STEPS = 30
SPLITS = (1, 2, 4)


def run_team(directory, name, processes, store=None):
    """The team's summaries, one per process."""
    agents = [f"Agent{i}" for i in range(1, AGENTS + 1)]
    per = AGENTS // processes
    common = [
        sys.executable,
        str(ROOT / "main.py"),
        "--agents",
        str(AGENTS),
        "--steps",
        str(STEPS),
        "--world",
        "office",
        "-q",
    ]
    started = []
    for index in range(processes):
        run_dir = Path(directory) / f"{name}-{index}"
        split = ["--store", store, "--run-id", name] if store else []
        if store and processes > 1:
            split += ["--local-agents", ",".join(agents[index * per : (index + 1) * per])]
        started.append(
            (
                run_dir,
                subprocess.Popen(
                    [*common, "--run-dir", str(run_dir), *split],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    summaries = []
    for run_dir, process in started:
        _, stderr = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise SystemExit(f"{name}: a process failed: {stderr.strip()}")
        summaries.append(json.loads((run_dir / "summary.json").read_text()))
    return summaries


def figures(summaries):
    wall = max(s["wall_seconds"] for s in summaries)
    agent_steps = sum(summaries[0]["steps"].values())
    commits = [s["store"]["commit_ms"] for s in summaries]
    return {
        "processes": len(summaries),
        "agent_steps": agent_steps,
        "wall_seconds": wall,
        "agent_steps_per_second": round(agent_steps / wall, 2),
        "commit_ms_p50": max(c["p50"] for c in commits),
        "commit_ms_p90": max(c["p90"] for c in commits),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "split_team.json")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        raise SystemExit("bench/split_team.py needs redis-server: apt-get install redis-server")
    rows = {}
    with tempfile.TemporaryDirectory() as directory:
        rows["in-process store, 1 process"] = figures(run_team(directory, "in-process", 1))
        server = RedisServer(directory)
        try:
            for processes in SPLITS:
                name = f"redis-{processes}"
                rows[f"Redis store, {processes} process{'es' if processes > 1 else ''}"] = figures(
                    run_team(directory, name, processes, server.url)
                )
        finally:
            server.stop()
    print(f"| {AGENTS} agents, {STEPS} steps | agent-steps/s | commit ms, median (p90) |")
    print("|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['agent_steps_per_second']} | {row['commit_ms_p50']} ({row['commit_ms_p90']}) |")
    write_figures(args.out, {"agents": AGENTS, "steps": STEPS, "rows": rows})


if __name__ == "__main__":
    main()
