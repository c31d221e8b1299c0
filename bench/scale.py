"""The scale bench: `python bench/scale.py` runs offline teams of 8, 64, 256 and 1,000 agents on one large
generated hall and writes bench/scale.json and bench/scale.html (a plotly plot), by this script alone;
`--replot` draws the plot again from the figures file (`--out`), running nothing.

Each team runs as `python main.py` does, in a process of its own, so that its peak RSS is its own:

- **ms per agent-step**: the run's wall time after its first step (bench/run.py's `after_first_step`),
  over its agent-steps. The first step is left out because it pays once what a run pays once (threads
  started, every agent's first view, the embedder's first pass), which a longer run spreads thinner;
  the wall time counts the final save, which embeds the memory texts held back;
- **peak RSS** of the team's process (its maximum resident set, from the kernel, as `time -v` reads it);
- **MB per agent** beyond a fixed base: (peak RSS - the base) / (agents - 1), the base being the peak RSS
  of a 1-agent run of the same world and steps (the interpreter, the libraries, the model and the world);
- **x smallest**: the cost per agent-step against the smallest team's (8 agents) in the same bench run;
- for the smallest team, **x floor**: its cost per agent-step against the time a plain fp32 ONNX Runtime
  session takes to embed that run's memory texts (bench/run.py's `embedding_floor`; the built-in explorer
  embeds no queries).

A team whose process passes `--max-rss-gb` is stopped and its row says so, as a machine shared with others
cannot give it more.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import figures_path, write_figures, write_plot  # noqa: E402
from bench.run import after_first_step, embedding_floor  # noqa: E402
from explorer.report.charts import points_chart  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402

TEAMS = (8, 64, 256, 1000)
STEPS = 10
# 120 x 120: a team starts together on the free cells nearest one place, so 1,000 agents stand on a
# tenth of this hall's free floor (on 80 x 80, a sixth), with ground to spread into, as a small team has.
WORLD = "gen:hall?size=120x120"
BASE_AGENTS = 1  # the fixed base's run: everything but the agents
MAX_RSS_GB = 8.0
RSS_POLL_SECONDS = 0.5
TIMEOUT_SECONDS = 3 * 3600


def team_run(agents: int, steps: int, world: str, workdir: Path, max_rss_gb: float) -> dict:
    """One team as `python main.py` runs it, in its own process: its summary, its run directory, its peak RSS."""
    run_dir = workdir / f"agents-{agents}"
    command = [sys.executable, str(ROOT / "main.py"), "--world", world, "--agents", str(agents)]
    command += ["--steps", str(steps), "--seed", "1", "-q", "--run-dir", str(run_dir)]
    with open(workdir / f"agents-{agents}.err", "wb") as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        stopped = _watch_rss(process.pid, max_rss_gb)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage: its peak RSS
        process.returncode = os.waitstatus_to_exitcode(status)
    stopped_at = stopped.get("seconds")
    if process.returncode != 0 and stopped_at is None:
        message = (workdir / f"agents-{agents}.err").read_text().strip().splitlines()[-1:]
        print(f"bench/scale.py: the {agents}-agent run failed: {' '.join(message)}", file=sys.stderr)
        raise SystemExit(2)
    summary = None if stopped_at is not None else json.loads((run_dir / "summary.json").read_text())
    return {"summary": summary, "run_dir": run_dir, "peak_rss_mb": usage.ru_maxrss / 1024, "stopped_at": stopped_at}


def _watch_rss(pid: int, max_rss_gb: float) -> dict:
    """Watch the process's resident set from a thread; kill it once it passes `max_rss_gb`. The dict
    returned gets "seconds" (from the start) if it was stopped."""
    stopped: dict = {}
    started = time.perf_counter()

    def watch() -> None:
        while (rss := _rss_gb(pid)) is not None:
            if rss > max_rss_gb:
                stopped["seconds"] = round(time.perf_counter() - started, 1)
                os.kill(pid, 9)
                return
            time.sleep(RSS_POLL_SECONDS)

    threading.Thread(target=watch, daemon=True).start()
    return stopped


def _rss_gb(pid: int) -> float | None:
    """The process's resident set now, in GB; None once it has ended."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kb = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), None)
    return None if kb is None else kb / 1024**2  # a process that has exited but is not yet waited for has none


def team_row(agents: int, run: dict, base_mb: float, max_rss_gb: float) -> dict:
    """A team's figures (before the ratios, which need the smallest team's)."""
    row = {
        "agents": agents,
        "peak_rss_mb": round(run["peak_rss_mb"]),
        "peak_rss_gb": round(run["peak_rss_mb"] / 1024, 2),
    }
    if run["stopped_at"] is not None:
        return {**row, "stopped": f"its RSS passed {max_rss_gb} GB after {run['stopped_at']} s"}
    _, per_agent_step = after_first_step(run["summary"], agents)
    return {
        **row,
        "ms_per_agent_step": round(per_agent_step * 1000, 2),
        "agent_steps_per_second": round(1 / per_agent_step, 1),
        "wall_seconds": run["summary"]["wall_seconds"],
        "mb_per_agent": round((run["peak_rss_mb"] - base_mb) / (agents - BASE_AGENTS), 2),
    }


def with_ratios(rows: list[dict]) -> list[dict]:
    """Each row's cost per agent-step against the smallest team's, in the same bench run."""
    smallest = rows[0].get("ms_per_agent_step")
    return [
        {**row, "times_smallest": round(row["ms_per_agent_step"] / smallest, 2)}
        if smallest and "ms_per_agent_step" in row
        else row
        for row in rows
    ]


def floor_figures(row: dict, run_dir: Path) -> dict:
    """The smallest team's cost against the plain fp32 embedding of its run's memory texts (bench/run.py)."""
    embedder = SentenceEmbedder()
    embedder.wait_ready()
    floor, tokens = embedding_floor(embedder, run_dir)
    return {
        "agents": row["agents"],
        "floor_ms_per_agent_step": round(floor * 1000, 2),
        "times_floor": round(row["ms_per_agent_step"] / (floor * 1000), 2),
        "mean_tokens_per_text": round(tokens, 1),
    }


def plot(path: Path, figures: dict) -> None:
    """The plot: ms per agent-step and peak RSS against the team's size (bench/output.py's `write_plot`)."""
    measured = [row for row in figures["teams"] if "ms_per_agent_step" in row]
    every = figures["teams"]
    cost = points_chart(
        "cost",
        f"Offline teams on {figures['world']}, {figures['steps']} steps: ms per agent-step after the first step",
        "agents",
        "ms per agent-step",
        {"ms per agent-step": ([r["agents"] for r in measured], [r["ms_per_agent_step"] for r in measured])},
        log_x=True,
    )
    memory = points_chart(
        "memory",
        f"Peak RSS (a 1-agent run: {figures['base_rss_mb']} MB)",
        "agents",
        "GB",
        {"peak RSS": ([r["agents"] for r in every], [r["peak_rss_gb"] for r in every])},
        log_x=True,
    )
    write_plot(path, "bench/scale.py", f"{cost}\n{memory}", figures["command"])


def markdown_table(figures: dict) -> str:
    """The teams as docs/performance.md shows them."""
    lines = [
        "| agents | ms per agent-step | x 8 agents | agent-steps/s | peak RSS | MB per agent |",
        "|---|---|---|---|---|---|",
    ]
    for row in figures["teams"]:
        if "stopped" in row:
            lines.append(f"| {row['agents']:,} | stopped: {row['stopped']} | | | {row['peak_rss_gb']} GB | |")
            continue
        cells = (row["ms_per_agent_step"], f"{row['times_smallest']}x", row["agent_steps_per_second"])
        lines.append(
            f"| {row['agents']:,} | {' | '.join(map(str, cells))} | {row['peak_rss_gb']} GB | {row['mb_per_agent']} |"
        )
    floor = figures["embedding_floor"]
    if floor:
        lines.append(
            f"\n{floor['agents']} agents: {floor['times_floor']}x the fp32 embedding floor of their memory texts "
            f"({floor['floor_ms_per_agent_step']} ms a text). Base (a 1-agent run): {figures['base_rss_mb']} MB."
        )
    return "\n".join(lines)


def measure(arguments: argparse.Namespace, workdir: Path) -> dict:
    base = team_run(BASE_AGENTS, arguments.steps, arguments.world, workdir, math.inf)  # never stopped: the base
    runs = {}
    for agents in arguments.teams:
        runs[agents] = team_run(agents, arguments.steps, arguments.world, workdir, arguments.max_rss_gb)
        print(f"{agents} agents: peak RSS {runs[agents]['peak_rss_mb']:.0f} MB", flush=True)
    rows = with_ratios([team_row(n, run, base["peak_rss_mb"], arguments.max_rss_gb) for n, run in runs.items()])
    smallest = arguments.teams[0]
    floor = floor_figures(rows[0], runs[smallest]["run_dir"]) if "ms_per_agent_step" in rows[0] else None
    return {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "world": arguments.world,
        "steps": arguments.steps,
        "timed": "wall time after the first step, final save included, over the agent-steps after the first",
        "base_rss_mb": round(base["peak_rss_mb"]),
        "teams": rows,
        "embedding_floor": floor,
    }


def _teams(text: str) -> tuple[int, ...]:
    try:
        teams = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give team sizes as 8,64,256") from None
    if not teams or min(teams) < 2 or list(teams) != sorted(set(teams)):
        raise argparse.ArgumentTypeError(f"{text!r}: give increasing team sizes of at least 2 agents")
    return teams


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Offline teams of growing size: cost per agent-step and memory.")
    parser.add_argument(
        "--teams", type=_teams, default=TEAMS, help="team sizes, smallest first (default 8,64,256,1000)"
    )
    parser.add_argument("--steps", type=int, choices=range(2, 1001), default=STEPS, metavar="N", help="steps (2-1000)")
    parser.add_argument("--world", default=WORLD, help=f"the world every team explores (default {WORLD})")
    parser.add_argument("--max-rss-gb", type=float, default=MAX_RSS_GB, help="stop a team whose RSS passes this")
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "scale.json", help="the figures")
    parser.add_argument("--plot", type=figures_path, default=ROOT / "bench" / "scale.html", help="the plot")
    parser.add_argument("--replot", action="store_true", help="draw the plot again from the figures file; no run")
    return parser.parse_args()


def main() -> None:
    arguments = _arguments()
    if arguments.replot:
        plot(arguments.plot, json.loads(arguments.out.read_text()))
        print(f"The plot of {arguments.out} written to {arguments.plot}")
        return
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as workdir:
        figures = measure(arguments, Path(workdir))
    write_figures(arguments.out, figures)
    plot(arguments.plot, json.loads(arguments.out.read_text()))
    for row in figures["teams"]:
        print(json.dumps(row))
    print(markdown_table(figures))
    print(f"Figures written to {arguments.out}, the plot to {arguments.plot}")


if __name__ == "__main__":
    main()
