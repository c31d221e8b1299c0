"""Where an agent's memory is: peak RSS against what Python's allocator traced, per team size.

`python bench/memory_gap.py` writes bench/memory_gap.json. Each team is one `python main.py` run (the built-in
explorer, `--steps 10`) in a child process of its own under tracemalloc: its peak RSS (kernel), tracemalloc's
peak and end totals, and its largest traced lines at the end. The slope of each from the smallest team is
the MB per agent; RSS per agent minus traced per agent is memory outside Python's allocator (native
libraries such as FAISS and ONNX Runtime, malloc fragmentation, thread stacks).
"""

from __future__ import annotations

import argparse
import json
import resource
import runpy
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402

WORLD = "gen:hall?size=120x120"
TEAMS = (8, 64)
STEPS = 10
TOP_LINES = 12
MB = 1e6


def traced_run(main_args: list[str], figures_file: Path) -> None:
    """In the child: run main.py under tracemalloc, then write its figures to `figures_file`."""
    tracemalloc.start(1)
    sys.argv = [str(ROOT / "main.py"), *main_args]
    try:
        runpy.run_path(str(ROOT / "main.py"), run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    current, peak = tracemalloc.get_traced_memory()
    top = tracemalloc.take_snapshot().statistics("lineno")[:TOP_LINES]
    figures = {
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB, 1),
        "traced_peak_mb": round(peak / MB, 1),
        "traced_end_mb": round(current / MB, 1),
        "top_lines_mb": [[str(line.traceback[0]), round(line.size / MB, 2)] for line in top],
    }
    figures_file.write_text(json.dumps(figures))


def team_figures(world: str, agents: int, steps: int, workdir: Path) -> dict:
    """One team's figures, from a child process of this script."""
    figures_file = workdir / f"team-{agents}.json"
    main_args = ["--world", world, "--agents", str(agents), "--steps", str(steps)]
    main_args += ["--run-dir", str(workdir / f"team-{agents}"), "-q"]
    command = [sys.executable, __file__, "--child", str(figures_file), "--", *main_args]
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        errors = done.stderr.decode(errors="replace")[-500:]
        raise SystemExit(f"bench/memory_gap.py: {agents} agents failed ({done.returncode}): {errors}")
    return {"agents": agents, **json.loads(figures_file.read_text())}


def with_slopes(rows: list[dict]) -> list[dict]:
    """Each row with the MB per agent beyond the smallest team's: RSS, traced peak, and the gap."""
    base = rows[0]
    for row in rows[1:]:
        added = row["agents"] - base["agents"]
        rss = (row["peak_rss_mb"] - base["peak_rss_mb"]) / added
        traced = (row["traced_peak_mb"] - base["traced_peak_mb"]) / added
        row["rss_mb_per_agent"] = round(rss, 2)
        row["traced_mb_per_agent"] = round(traced, 2)
        row["untraced_mb_per_agent"] = round(rss - traced, 2)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default=WORLD)
    parser.add_argument("--teams", default=",".join(map(str, TEAMS)), help="team sizes, smallest first")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "memory_gap.json")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("main_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        traced_run(args.main_args, args.child)
        return
    teams = sorted(int(size) for size in args.teams.split(","))
    if len(teams) < 2 or teams[0] < 1:
        parser.error("--teams: give two team sizes or more, each at least 1")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for agents in teams:
            rows.append(team_figures(args.world, agents, args.steps, Path(workdir)))
            print({key: rows[-1][key] for key in ("agents", "peak_rss_mb", "traced_peak_mb")}, flush=True)
    write_figures(
        args.out,
        {
            "command": command_line("memory_gap.py"),
            "world": args.world,
            "steps": args.steps,
            "teams": with_slopes(rows),
        },
    )


if __name__ == "__main__":
    main()
