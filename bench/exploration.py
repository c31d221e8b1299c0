"""How well the team explores: `python bench/exploration.py` prints the table and writes bench/exploration.json.

For each world (the shipped ones and the stress worlds in bench/worlds/) and
each seed, the steps a team needs to see 90% of the objects, in real runs of
the product (real embeddings, the real team store, each step traced), under
four conditions, against the full-knowledge reference team of
bench/full_knowledge.py from the same start poses:

- offline: the built-in explorer, with messages;
- no-comm: the same with --no-comm;
- random: the random baseline;
- goals: --decide goals with a model that always answers the first candidate
  (`goal: G1`), through real litellm against a local OpenAI-compatible server.

Agents are placed by the seed (the worlds' own start poses are set aside), so
that each seed is a different start. Teams have 2 agents, the cottage 4 (more
agents than rooms).
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
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.full_knowledge import full_knowledge_steps  # noqa: E402
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.run.policy_factory import make_policy  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.testing.chat_server import ChatServer  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS, load_world  # noqa: E402

STRESS_WORLDS = ROOT / "bench" / "worlds"
SHARE = 90  # percent of the objects
AGENTS = {"cottage": 4}  # more agents than rooms; 2 elsewhere
CONDITIONS = ("offline", "no-comm", "random", "goals")
MAX_STEPS = 400


def seeded_world(path, directory):
    """A copy of the world without its start poses, so that the seed places the agents."""
    data = yaml.safe_load(path.read_text())
    data.pop("agents", None)
    copy = Path(directory) / path.name
    copy.write_text(yaml.safe_dump(data))
    return copy


def run_steps(world_path, agents, seed, steps, embedder, condition, api_base=None):
    """(steps to SHARE% of the objects or None, the run's team block)."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_summary(world_path, agents, seed, steps, embedder, condition, Path(tmp) / "run", api_base)
    return summary["team"]["steps_to_objects"][f"{SHARE}%"], summary["team"]


def run_summary(
    world_path, agents, seed, steps, embedder, condition, run_dir, api_base=None, policy_factory=make_policy
):
    """A run of the product under `condition`, written into `run_dir`: its summary."""
    settings = {
        "offline": {},
        "no-comm": {"comm": "none"},
        "random": {"model": "random"},
        "goals": {"model": "openai/bench-model", "api_base": api_base, "decide": "goals"},
    }[condition]
    with contextlib.redirect_stdout(io.StringIO()):
        config = RunConfig.of(
            world=world_path, agents=agents, seed=seed, steps=steps, run_dir=run_dir, verbosity=-1, **settings
        ).check()
        return ExplorationRun(config, embedder=embedder, policy_factory=policy_factory).execute()


def geometric_mean(values):
    return round(statistics.geometric_mean(values), 3) if values else None


def main():
    args = _arguments()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the local server takes any key
    paths = [p for p in world_paths() if not args.worlds or p.stem in args.worlds]
    embedder = SentenceEmbedder()
    started = time.perf_counter()
    rows = measure(paths, args.seeds, args.conditions, embedder)
    summary = summarise(rows, args.seeds, args.conditions, round(time.perf_counter() - started, 1))
    write_figures(args.out, summary)
    print(json.dumps(summary["overall"], indent=2))
    print(markdown_table(summary))


def world_paths() -> list[Path]:
    """The shipped worlds, then the stress worlds."""
    return sorted(SHIPPED_WORLDS.glob("*.yaml")) + sorted(STRESS_WORLDS.glob("*.yaml"))


def _arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 42])
    parser.add_argument(
        "--worlds",
        nargs="+",
        choices=[path.stem for path in world_paths()],
        help="world names (default: every shipped and stress world)",
    )
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS))
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "exploration.json")
    return parser.parse_args()


def measure(paths, seeds, conditions, embedder):
    """A row per world and seed, each printed as it is done."""
    rows = []
    with ChatServer(lambda request: "goal: G1") as server, tempfile.TemporaryDirectory() as worlds:
        for path in paths:
            world_path = seeded_world(path, worlds)
            world = load_world(world_path)
            agents = AGENTS.get(path.stem, 2)
            for seed in seeds:
                reference = full_knowledge_steps(world, agents, seed, SHARE)
                steps = min(MAX_STEPS, max(60, 4 * reference))
                row = {
                    "world": path.stem,
                    "agents": agents,
                    "seed": seed,
                    "full_knowledge": reference,
                    "steps_run": steps,
                }
                for condition in conditions:
                    reached, team = run_steps(world_path, agents, seed, steps, embedder, condition, server.api_base)
                    row[condition] = condition_figures(reached, team, steps, reference)
                rows.append(row)
                print(
                    f"{path.stem:10} seed {seed:3}: full knowledge {reference:3}  "
                    + "  ".join(f"{c} {row[c]['steps']}" for c in conditions),
                    flush=True,
                )
    return rows


def condition_figures(reached, team, steps, reference):
    """One condition's figures in one row; `reached` is its steps to SHARE% (None: not within `steps`)."""
    # Not reached within the run: at least the steps run, so a ratio from it is a lower bound.
    return {
        "steps": reached,
        "ratio": round((reached or steps + 1) / reference, 3),
        "reached": reached is not None,
        "messages_per_agent_step": team["messages_per_agent_step"],
        "message_chars_per_agent_step": team["message_chars_per_agent_step"],
        "model_calls_per_agent_step": team["model_calls_per_agent_step"],
        "overlap_ratio": team["overlap_ratio"],
    }


def summarise(rows, seeds, conditions, wall_seconds):
    """The rows, with each condition's ratio per world and over all worlds (and against offline's)."""
    summary = {
        "share": SHARE,
        "seeds": seeds,
        "conditions": conditions,
        "rows": rows,
        "wall_seconds": wall_seconds,
        "per_world": {},
        "overall": {},
    }
    for condition in conditions:
        per_world = {}
        for name in dict.fromkeys(r["world"] for r in rows):
            per_world[name] = geometric_mean([r[condition]["ratio"] for r in rows if r["world"] == name])
        summary["per_world"][condition] = per_world
        summary["overall"][condition] = overall_figures(rows, condition, per_world)
    if "offline" in conditions:
        offline = summary["per_world"]["offline"]
        for condition in ("no-comm", "random", "goals"):
            if condition in conditions:
                against = {w: round(r / offline[w], 3) for w, r in summary["per_world"][condition].items()}
                summary["overall"][condition]["against_offline"] = geometric_mean(list(against.values()))
    return summary


def overall_figures(rows, condition, per_world):
    """One condition over every world: `per_world` is its geometric mean ratio in each."""
    return {
        "geometric_mean_ratio": geometric_mean(list(per_world.values())),
        "worst_world_ratio": max(per_world.values()),
        "messages_per_agent_step": round(statistics.mean(r[condition]["messages_per_agent_step"] for r in rows), 3),
        "model_calls_per_agent_step": round(
            statistics.mean(r[condition]["model_calls_per_agent_step"] for r in rows), 3
        ),
    }


def markdown_table(summary):
    """The exploration table (docs/performance.md): steps to 90% of the objects over the full-knowledge team's, per world."""
    conditions = summary["conditions"]
    lines = [
        "| world | agents | full knowledge (steps) | " + " | ".join(conditions) + " |",
        "|---|---|---|" + "---|" * len(conditions),
    ]
    names = dict.fromkeys(r["world"] for r in summary["rows"])
    for name in names:
        rows = [r for r in summary["rows"] if r["world"] == name]
        reference = statistics.mean(r["full_knowledge"] for r in rows)
        cells = []
        for condition in conditions:
            ratio = summary["per_world"][condition][name]
            bound = "" if all(r[condition]["reached"] for r in rows) else ">"
            cells.append(f"{bound}{ratio:.2f}x")
        lines.append(f"| {name} | {rows[0]['agents']} | {reference:.1f} | " + " | ".join(cells) + " |")
    overall = summary["overall"]
    bounds = {c: "" if all(r[c]["reached"] for r in summary["rows"]) else ">" for c in conditions}
    lines.append(
        "| **geometric mean** | | | "
        + " | ".join(f"**{bounds[c]}{overall[c]['geometric_mean_ratio']:.2f}x**" for c in conditions)
        + " |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
