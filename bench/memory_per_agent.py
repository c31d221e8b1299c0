"""Memory per agent: the peak RSS of offline teams of several sizes on one world, and the MB each agent adds.

`python bench/memory_per_agent.py` writes bench/memory_per_agent.json. Each team is one `python main.py` run
(the built-in explorer, the ONNX embedder, `--steps 10`), in a process of its own, whose peak RSS is the
kernel's count for that process alone (wait4). An agent's share is the slope from the smallest team:
(peak RSS of N agents - that of the smallest) / (N - the smallest number), so the fixed base (the
interpreter, the libraries, the embedding model, the world) drops out. Issue 51 asks at most 2 MB per agent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402

WORLD = "gen:hall?size=80x80"
TEAMS = (8, 64, 256)
STEPS = 10
MB = 1e6


def team_peak(world: str, agents: int, steps: int, workdir: Path) -> dict:
    """One run of `agents` offline agents: its peak RSS (MB) and wall time (s)."""
    command = [sys.executable, str(ROOT / "main.py"), "--world", world, "--agents", str(agents)]
    command += ["--steps", str(steps), "--run-dir", str(workdir / f"team-{agents}"), "-q"]
    began = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"bench/memory_per_agent.py: {agents} agents failed ({process.returncode}): {errors[-500:]}")
    # ru_maxrss is in kilobytes on Linux.
    return {
        "agents": agents,
        "peak_rss_mb": round(usage.ru_maxrss * 1024 / MB, 1),
        "seconds": round(time.perf_counter() - began, 1),
    }


def with_shares(rows: list[dict]) -> list[dict]:
    """Each row with the MB per agent beyond the smallest team's."""
    base = rows[0]
    for row in rows[1:]:
        row["mb_per_agent"] = round((row["peak_rss_mb"] - base["peak_rss_mb"]) / (row["agents"] - base["agents"]), 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default=WORLD)
    parser.add_argument("--teams", default=",".join(map(str, TEAMS)), help="team sizes, smallest first")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "memory_per_agent.json")
    args = parser.parse_args()
    teams = sorted(int(size) for size in args.teams.split(","))
    if len(teams) < 2 or teams[0] < 1:
        parser.error("--teams: give two team sizes or more, each at least 1")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for agents in teams:
            rows.append(team_peak(args.world, agents, args.steps, Path(workdir)))
            print(rows[-1], flush=True)
    write_figures(
        args.out,
        {
            "command": command_line("memory_per_agent.py"),
            "world": args.world,
            "steps": args.steps,
            "target_mb_per_agent": 2.0,
            "teams": with_shares(rows),
        },
    )


if __name__ == "__main__":
    main()
