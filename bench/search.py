"""Search tasks on generated houses: `python bench/search.py` prints the table and writes bench/search.json.

Each held-out house (`gen:house`, world seeds HELD_OUT_SEEDS, fixed before any tuning; the prior's
SHARPNESS was tuned on DEV_SEEDS only, `--seeds dev`: 6, 12 and 20 tried, and floors under the weights, 12
and none kept) gets two targets placed by the kind of room, with
the product's noise (perception/families/placement.py), and a team of 2 agents placed by the run's seed
(perception/starts.py) searches for them, in real runs of the product (real embeddings, the real team store, each step traced),
until it has found both or spent the house's step budget. The steps to find both, under:

- frontier: the built-in explorer without the prior (`--no-prior`), today's explorer;
- prior: the built-in explorer with the semantic prior (the default under a task);
- full-knowledge: the greedy team of bench/full_knowledge.py that knows the map, on the targets alone;
- random: the random baseline;
- stub-goals: `--decide goals` with a stub model (a local OpenAI-compatible server) that always picks the
  goal into the room a hand-written table gives for the targets left (STUB_TABLE), else G1;
- known-layout (only when asked, `--conditions ... known-layout`): a limit, the explorer with the prior whose
  map knows every wall and every room of the house from its first step, but not where anything is: what
  finding the layout costs the prior;
- limits on what a prior could give this planner (only when asked), each the explorer with a prior whose
  weights know more than the embeddings do:
  - generator-odds: each kind of room weighted by the generator's own odds of holding a target left (a
    room of its home kind: 1 - TARGET_NOISE shared among the house's rooms of that kind; any other room:
    TARGET_NOISE shared among the rest), against the average room's: a perfectly calibrated kind prior;
  - room-oracle: the room each target lies in weighted ORACLE_WEIGHTS[0], every other room known
    ORACLE_WEIGHTS[1]: a prior that is never wrong, the rooms still found by exploring;
  - room-oracle-layout: the room oracle told every wall and room at its first step, as known-layout is;
- real-goals (only when asked, `--conditions ... real-goals`: slow): `--decide goals` with SmolLM2-135M-Instruct
  behind llama-cpp-python's server (explorer/testing/local_model.py), as bench/real_model.py runs it.

A run that does not find both counts its budget plus one: its ratio is a lower bound (marked ">").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import geometric_mean  # noqa: E402
from bench.full_knowledge import full_knowledge_curve  # noqa: E402
from bench.known_map import KnownMapExplorer  # noqa: E402
from bench.output import command_line, figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.policies.offline import OfflineExplorer  # noqa: E402
from explorer.policies.semantic_prior import SemanticPrior  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.run.search_prior import prior_table  # noqa: E402
from explorer.testing.chat_server import ChatServer  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.families.generate import open_world  # noqa: E402
from perception.families.placement import TARGET_NOISE  # noqa: E402
from perception.families.things import home_kinds  # noqa: E402
from perception.rooms import Room  # noqa: E402
from perception.targets import is_target_object  # noqa: E402
from perception.world import World  # noqa: E402

HELD_OUT_SEEDS = tuple(range(1001, 1013))  # fixed before tuning: the table in docs/performance.md
DEV_SEEDS = tuple(range(1, 13))  # what SHARPNESS and the placement noise were tried on
WORLD = "gen:house"
AGENTS = 2
# Two targets per house, by the seed: things that belong in different kinds of room.
TARGET_PAIRS = (
    ("toothbrush", "laptop"),
    ("frying_pan", "teddy_bear"),
    ("shampoo", "wine_glass"),
    ("mug", "keys"),
    ("teddy_bear", "toothbrush"),
    ("laptop", "frying_pan"),
)
STUB_TABLE = {  # the stub's hand-written table: where a person would look first
    "toothbrush": ("bathroom",),
    "shampoo": ("bathroom",),
    "laptop": ("office", "bedroom"),
    "frying pan": ("kitchen",),
    "mug": ("kitchen",),
    "teddy bear": ("bedroom",),
    "wine glass": ("dining room", "kitchen"),
    "keys": ("hallway", "living room"),
}
STUB_MODEL = "openai/search-stub"
REAL_MODEL = "openai/smollm2-135m-instruct"
DEFAULT_CONDITIONS = ("frontier", "prior", "full-knowledge", "random", "stub-goals")
LIMITS = ("known-layout", "generator-odds", "room-oracle", "room-oracle-layout")
CONDITIONS = (*DEFAULT_CONDITIONS, *LIMITS, "real-goals")
ORACLE_WEIGHTS = (10.0, 0.3)  # room-oracle: a room holding a target left, any other known room (unknown: 1)
GOAL_LINE = re.compile(r"^- G(\d+): (.*)$", re.MULTILINE)
STILL_TO_FIND = re.compile(r"Still to find: (.*?)\.")
BOOTSTRAP = 2000


def targets_for(seed: int) -> tuple[str, str]:
    return TARGET_PAIRS[seed % len(TARGET_PAIRS)]


def stub_answer(request: dict) -> str:
    """The stub model's reply: the first goal whose line names a room the table gives for a target left,
    the likeliest room first; G1 where none does."""
    prompt = request["messages"][-1]["content"]
    if isinstance(prompt, list):
        prompt = " ".join(part.get("text", "") for part in prompt)
    left = STILL_TO_FIND.search(prompt)
    wanted = [kinds for target, kinds in STUB_TABLE.items() if left and target in left.group(1)]
    best = (len(max(wanted, key=len, default=())) + 1, 1)
    for number, text in GOAL_LINE.findall(prompt):
        leads = text.split("look ", 1)[0] if text.startswith(("enter", "look into", "look around")) else ""
        for kinds in wanted:
            rank = next((i for i, kind in enumerate(kinds) if kind in leads), None)
            if rank is not None and (rank, int(number)) < best:
                best = (rank, int(number))
    return json.dumps({"goal": f"G{best[1]}", "reason": "the room my table gives for what is left"})


def generator_odds(world: World) -> dict[str, dict[str, float]]:
    """A prior's table from the generator's own odds (perception/families/placement.py): target -> kind ->
    the odds that a room of that kind holds the target, against the average room's."""
    kinds = [room.kind for room in world.rooms]
    return {target: _kind_odds(target, kinds) for target in world.targets}


def _kind_odds(target: str, kinds: list[str]) -> dict[str, float]:
    """kind -> the odds that a given room of that kind holds `target`, times the number of rooms."""
    home = next((kind for kind in home_kinds(target) if kind in kinds), None)
    homes = kinds.count(home)
    if not homes or homes == len(kinds):
        return {}
    share = {True: (1 - TARGET_NOISE) / homes, False: TARGET_NOISE / (len(kinds) - homes)}
    return {kind: share[kind == home] * len(kinds) for kind in set(kinds)}


class RoomOracle(SemanticPrior):
    """A prior that knows which room each target lies in (ORACLE_WEIGHTS), once the explorer knows the room."""

    def __init__(self, table: dict[str, dict[str, float]], world: World) -> None:
        super().__init__(table)
        placed = [(name, cell[:2]) for name, cell in world.objects.items()]
        self.holders = {
            target: {
                room.name
                for room in world.rooms
                for name, column in placed
                if column in room.cells and is_target_object(name, target)
            }
            for target in world.targets
        }

    def room_weight(self, room: Room) -> float:
        holds = any(room.name in self.holders[target] for target in self.left)
        return ORACLE_WEIGHTS[0] if holds else ORACLE_WEIGHTS[1]


def limit_policies(condition: str, world: World, embedder: SentenceEmbedder):
    """A policy factory for one of LIMITS: explorers each with a prior of its own, over the run's table."""
    table = prior_table(world, embedder)
    make_prior = {
        "known-layout": lambda: SemanticPrior(table),
        "generator-odds": lambda: SemanticPrior(generator_odds(world)),
        "room-oracle": lambda: RoomOracle(table, world),
        "room-oracle-layout": lambda: RoomOracle(table, world),
    }[condition]
    if condition.endswith("layout"):
        return lambda *_: KnownMapExplorer(world, make_prior())
    return lambda *_: OfflineExplorer(make_prior())


def run_steps(seed: int, condition: str, embedder: SentenceEmbedder, api_base: str | None) -> tuple[int | None, int]:
    """(steps until both targets were found, or None; the step budget) of one run of the product."""
    settings = {
        "frontier": {"prior": False},
        "prior": {},
        **{limit: {"prior": False} for limit in LIMITS},  # the bench's own explorers carry the prior
        "random": {"model": "random"},
        "stub-goals": {"model": STUB_MODEL, "decide": "goals", "api_base": api_base},
        "real-goals": {
            "model": REAL_MODEL,
            "decide": "goals",
            "reply_format": "json",
            "api_base": api_base,
            "timeout": 300.0,
        },
    }[condition]
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        config = RunConfig.of(
            world=Path(WORLD),
            world_seed=seed,
            find=targets_for(seed),
            agents=AGENTS,
            run_dir=Path(tmp) / "run",
            verbosity=-1,
            **settings,
        ).check()
        if condition in LIMITS:
            factory = limit_policies(condition, open_world(WORLD, seed, targets_for(seed)), embedder)
            run = ExplorationRun(config, embedder=embedder, policy_factory=factory)
        else:
            run = ExplorationRun(config, embedder=embedder)
        summary = run.execute()
    return summary["search"]["steps_to_all"], run.steps


def full_knowledge_steps(seed: int) -> int | None:
    """The full-knowledge team's steps until it has seen both targets (the same start poses)."""
    world = open_world(WORLD, seed, targets_for(seed))
    targets = {
        name: cell for name, cell in world.objects.items() if any(is_target_object(name, t) for t in world.targets)
    }
    return full_knowledge_curve(replace(world, objects=targets), AGENTS, 0, (100,))[100]


def measure(seeds: tuple[int, ...], conditions: list[str], embedder: SentenceEmbedder, api_base: str) -> list[dict]:
    """A row per seed, each printed as it is done."""
    rows = []
    for seed in seeds:
        row: dict = {"seed": seed, "targets": list(targets_for(seed))}
        for condition in conditions:
            if condition == "full-knowledge":
                row[condition] = {"steps": full_knowledge_steps(seed), "budget": None}
                continue
            steps, budget = run_steps(seed, condition, embedder, api_base)
            row[condition] = {"steps": steps, "budget": budget}
        rows.append(row)
        print(f"seed {seed}: " + "  ".join(f"{c} {row[c]['steps']}" for c in conditions), flush=True)
    return rows


def counted(figures: dict) -> int:
    """The steps to count: a run that did not find both counts its budget plus one (a lower bound)."""
    return figures["steps"] if figures["steps"] is not None else figures["budget"] + 1


def interval(values: list[float], statistic, seed: int = 0) -> list[float]:
    """The 95% bootstrap interval of `statistic` over `values` (resampled seeds), deterministic."""
    rng = random.Random(seed)
    draws = sorted(statistic([rng.choice(values) for _ in values]) for _ in range(BOOTSTRAP))
    return [round(draws[int(0.025 * BOOTSTRAP)], 3), round(draws[int(0.975 * BOOTSTRAP) - 1], 3)]


def summarise(rows: list[dict], conditions: list[str]) -> dict:
    """Per condition: mean steps to all targets with its interval, and the geometric mean ratio to the
    frontier explorer's steps, seed by seed, with its interval."""
    overall = {}
    for condition in conditions:
        steps = [counted(row[condition]) for row in rows]
        figures = {
            "mean_steps": round(statistics.mean(steps), 2),
            "mean_steps_95": interval(steps, statistics.mean),
            "median_steps": statistics.median(steps),
            "all_found": sum(row[condition]["steps"] is not None for row in rows),
        }
        if "frontier" in conditions:
            ratios = [counted(row[condition]) / counted(row["frontier"]) for row in rows]
            figures["ratio_to_frontier"] = geometric_mean(ratios)
            figures["ratio_to_frontier_95"] = interval(ratios, statistics.geometric_mean)
        overall[condition] = figures
    return {"world": WORLD, "agents": AGENTS, "seeds": [row["seed"] for row in rows], "overall": overall}


def markdown_table(summary: dict, runs: int) -> str:
    lines = [
        "| condition | steps to both targets (mean, 95% interval) | median | found both | vs frontier (geo. mean, 95%) |",
        "|---|---|---|---|---|",
    ]
    for condition, figures in summary["overall"].items():
        low, high = figures["mean_steps_95"]
        bound = "" if figures["all_found"] == runs else ">"
        lines.append(
            f"| {condition} | {bound}{figures['mean_steps']:.1f} [{low:.1f}, {high:.1f}] | {figures['median_steps']} "
            f"| {figures['all_found']}/{runs} | {_against_frontier(figures, bound)} |"
        )
    return "\n".join(lines)


def _against_frontier(figures: dict, bound: str) -> str:
    """The ratio to the frontier explorer's steps with its interval, or nothing where the frontier was not run."""
    if "ratio_to_frontier" not in figures:
        return ""
    low, high = figures["ratio_to_frontier_95"]
    return f"{bound}{figures['ratio_to_frontier']:.2f}x [{low:.2f}, {high:.2f}]"


def main() -> None:
    args = _arguments()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the local servers take any key
    seeds = DEV_SEEDS if args.seeds == ["dev"] else HELD_OUT_SEEDS if not args.seeds else tuple(map(int, args.seeds))
    embedder = SentenceEmbedder()
    started = time.perf_counter()
    with ChatServer(stub_answer) as stub:
        if "real-goals" in args.conditions:
            rows = _with_real_model(seeds, args.conditions, embedder, stub.api_base)
        else:
            rows = measure(seeds, args.conditions, embedder, stub.api_base)
    summary = summarise(rows, args.conditions) | {
        "rows": rows,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "command": command_line("search.py"),
    }
    write_figures(args.out, summary)
    print(json.dumps(summary["overall"], indent=2))
    print(markdown_table(summary, len(rows)))


def _with_real_model(seeds: tuple[int, ...], conditions: list[str], embedder: SentenceEmbedder, stub: str) -> list:
    """The rows, with the small model served for the real-goals condition and the stub for the others."""
    from explorer.testing.local_model import INSTALL, missing_parts, serving

    missing = missing_parts()
    if missing:
        sys.exit(f"search.py: {missing}: {INSTALL}")
    with tempfile.TemporaryDirectory() as tmp, serving(Path(tmp) / "server.log") as real:
        rows = measure(seeds, [c for c in conditions if c != "real-goals"], embedder, stub)
        for row in rows:
            steps, budget = run_steps(row["seed"], "real-goals", embedder, real)
            row["real-goals"] = {"steps": steps, "budget": budget}
            # Each run as it ends: the model's runs are slow, and a bench stopped part way keeps what it measured.
            print(f"seed {row['seed']}: real-goals {steps}", flush=True)
    return rows


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", help="world seeds, or `dev` (default: the held-out seeds)")
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(DEFAULT_CONDITIONS))
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "search.json")
    return parser.parse_args()


if __name__ == "__main__":
    main()
