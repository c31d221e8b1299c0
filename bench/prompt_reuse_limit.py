"""How much of a goals prompt any prefix cache must still evaluate: `python bench/prompt_reuse_limit.py` prints
the table and writes bench/prompt_reuse_limit.json.

The limit of bench/local_model.py's "evaluated" column. A server reuses the longest beginning a prompt shares
with one it evaluated before, and nothing after the first token that differs. Here the teams of 2 and 4 of that
bench (the office world, seeds 1 and 2, 12 steps, the seed placing the agents) choose their goals with the model
behind llama-cpp-python's server, as that bench runs them; the share of the prompt tokens the server evaluated
is read from its log. Each prompt of the trace, in the order the run committed them, is then cut into the
model's own tokens (its GGUF file's vocabulary), and the bench counts the tokens after its longest common
beginning:

- with the prompt just before it (llama-cpp-python's server, which keeps one prompt's state);
- with any prompt before it (a cache that kept every one: llama.cpp's slots or vLLM's prefix cache at best);
- and the share of the tokens from the step's own part on (`## Step`), which no cache can hold, as the step's
  pose, sight, memories and goals are new.

The first prompt of a run is evaluated whole by any cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import seeded_world  # noqa: E402
from bench.local_model import (  # noqa: E402
    WORLD,
    Checkout,
    ServerLog,
    Team,
    add_team_arguments,
    installed_models,
    run_team,
    warm_up,
)
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.testing.local_model import LocalModel, serving  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402

TEAMS = (2, 4)  # bench/local_model.py's teams of more than one, on its world and held-out seeds
STEP_HEADING = "\n## Step "


def model_run(team: Team, api_base: str, log: ServerLog) -> tuple[list[str], float]:
    """(the prompts of the team's run, in the order its trace holds them; the share of the prompt tokens sent
    that the server evaluated)."""
    log.calls()  # what came before is not this run's
    with tempfile.TemporaryDirectory() as folder:
        run_dir = Path(folder) / "run"
        run_team(Checkout("after", ROOT), team, api_base, run_dir)
        lines = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    calls = log.calls()
    prompts = [line["prompt"] for line in lines if line["llm"]["calls"] and line["decision"]]
    return prompts, sum(c.evaluated for c in calls) / sum(c.sent for c in calls)


def _shared(first: list[int], second: list[int]) -> int:
    """How many tokens `first` and `second` begin with in common."""
    count = 0
    for mine, theirs in zip(first, second):
        if mine != theirs:
            break
        count += 1
    return count


def reuse_limits(prompts: list[str], tokenize) -> dict:
    """The share of `prompts`' tokens still evaluated with one prompt's state kept, with every one kept, and
    the share in the steps' own parts."""
    tokens = [tokenize(prompt) for prompt in prompts]
    sent = sum(len(t) for t in tokens)
    one_state = every_state = 0
    for number, mine in enumerate(tokens):
        earlier = tokens[:number]
        one_state += len(mine) - (_shared(mine, earlier[-1]) if earlier else 0)
        every_state += len(mine) - max((_shared(mine, theirs) for theirs in earlier), default=0)
    step_part = sum(len(tokenize(prompt[prompt.index(STEP_HEADING) :])) for prompt in prompts)
    return {
        "prompts": len(prompts),
        "tokens_per_prompt": round(sent / len(prompts)),
        "one_state": round(one_state / sent, 3),
        "every_state": round(every_state / sent, 3),
        "step_part": round(step_part / sent, 3),
    }


def tokenizer(model: LocalModel):
    """The model's own tokenizer, from its GGUF file's vocabulary alone."""
    import llama_cpp  # the .[local] extra's; loaded here only

    vocabulary = llama_cpp.Llama(model_path=str(model.file()), vocab_only=True, verbose=False)
    return lambda text: vocabulary.tokenize(text.encode(), add_bos=False, special=False)


def measure(models: list[LocalModel], teams: list[int], seeds: list[int], steps: int) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        world = seeded_world(SHIPPED_WORLDS / f"{WORLD}.yaml", folder)
        for model in models:
            tokenize = tokenizer(model)
            with serving(Path(folder) / f"{model.name}.log", model) as api_base:
                log = ServerLog(Path(folder) / f"{model.name}.log")
                warm_up(api_base, log)
                for agents in teams:
                    runs = [
                        model_run(Team(f"openai/{model.name}", agents, seed, world, steps), api_base, log)
                        for seed in seeds
                    ]
                    per_run = [reuse_limits(prompts, tokenize) | {"evaluated": share} for prompts, share in runs]
                    keys = ("evaluated", "one_state", "every_state", "step_part")
                    tokens = sum(run["prompts"] * run["tokens_per_prompt"] for run in per_run)
                    prompts = sum(run["prompts"] for run in per_run)
                    rows.append(
                        {"model": model.name, "agents": agents, "seeds": seeds, "prompts": prompts}
                        | {"tokens_per_prompt": round(tokens / prompts)}
                        | {key: _weighted(per_run, key) for key in keys}
                    )
                    print(rows[-1], file=sys.stderr, flush=True)
    return rows


def _weighted(per_run: list[dict], key: str) -> float:
    """A share over runs, each run weighted by its tokens."""
    tokens = [run["prompts"] * run["tokens_per_prompt"] for run in per_run]
    return round(sum(run[key] * weight for run, weight in zip(per_run, tokens)) / sum(tokens), 3)


def markdown_table(rows: list[dict]) -> str:
    lines = [
        "| model | agents | prompts | tokens / prompt | evaluated by the server | limit: one state kept "
        "| limit: every state kept | the steps' own parts |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [r["model"], r["agents"], r["prompts"], r["tokens_per_prompt"], f"{r['evaluated']:.0%}"]
        cells += [f"{r['one_state']:.0%}", f"{r['every_state']:.0%}"]
        lines.append("| " + " | ".join(str(cell) for cell in [*cells, f"{r['step_part']:.0%}"]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_team_arguments(parser, TEAMS)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "prompt_reuse_limit.json")
    args = parser.parse_args()
    rows = measure(installed_models(args.models), args.teams, args.seeds, args.steps)
    write_figures(args.out, {"world": WORLD, "steps": args.steps, "rows": rows})
    print(markdown_table(rows))


if __name__ == "__main__":
    main()
