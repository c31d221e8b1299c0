"""Where a local model's time goes: `python bench/local_model.py` prints the table and writes bench/local_model.json.

Teams of 1, 2 and 4 agents choose goals (`--decide goals`, under a JSON schema) with SmolLM2-135M-Instruct or
Gemma 3 270M behind llama-cpp-python's server, started as the README says (it logs each call's own timings), or
with `--server llama-server` behind llama.cpp's own (docs/models.md, "llama.cpp's own server"). Each
team is a real run of the product (`python main.py ...`, as a user runs it), from this checkout and, with
`--before REF`, from the commit REF too (a temporary `git worktree`), back to back on the same server: the
before and after of a change, measured in one run of the bench, whatever the machine's load does in between.

Per call, from the server's log: the prompt tokens sent and those evaluated (the rest it reused from the prompt
before), the seconds it took to evaluate them and to write the reply, and the reply's tokens. The floor of a call
is its evaluated prompt tokens at the server's prompt rate plus its reply tokens at its reply rate, both measured
on the same server just after each run, on some of the run's prompts (probe_rates: on a machine shared with
other work, a rate measured apart from the run would be of another load): what is left of a call's time above it
is the server's own work besides the model's, sampling under the grammar first. A call's time is the server's
(its log's total, from its prompt's evaluation to its reply's end) and, for a team of one, whose calls never wait
for a teammate's, the call's whole latency as the agent saw it. The grammar's cost: after each run, GRAMMAR_PROBES of its prompts
are asked again with the schema and without, in turn, and the server's seconds per reply token past the prompt
compared.

Held out: the office world, seeds 1 and 2 (the prompt layout was worked out on the apartment, seed 9).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import seeded_world  # noqa: E402
from bench.output import figures_path, write_figures  # noqa: E402
from explorer.model.schemas import goal_schema  # noqa: E402
from explorer.policies.echoes import ECHOED_FIELDS, repeats_instructions  # noqa: E402
from explorer.records.run_files import TraceLines  # noqa: E402
from explorer.testing.local_model import (  # noqa: E402
    INSTALL,
    LLAMA_CPP_PYTHON,
    LLAMA_SERVER,
    LOCAL_MODELS,
    MODEL_SERVERS,
    LocalModel,
    ModelServer,
    missing_parts,
    serving,
)
from perception.world import SHIPPED_WORLDS  # noqa: E402
from prompts import instruction_text  # noqa: E402

TEAMS, SEEDS, STEPS, WORLD = (1, 2, 4), (1, 2), 12, "office"
GRAMMAR_PROBES = 3  # prompts of each run asked again with the schema and without
PROBE_REPLY = 48  # tokens, at most
LOG_LAG = 5.0  # seconds llama-server's log may lag a call it has answered
RUN_TIMEOUT = 600.0  # seconds per call: a loaded machine is slow, and a call asked twice would cost twice
_CALL_END = re.compile(r"total time =\s*([\d.]+) ms")
_PROMPT_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
_REPLY_EVAL = re.compile(r"print:\s+eval time =\s*[\d.]+ ms /\s*(\d+) runs")
_REUSED = re.compile(r"Llama.generate: (\d+) prefix-match hit")


@dataclass(frozen=True)
class ServedCall:
    """One call as the server's log tells it."""

    sent: int  # prompt tokens
    evaluated: int  # of those, evaluated (the rest reused from the prompt before)
    reply_tokens: int
    seconds: float  # the server's whole time on it, from its prompt's evaluation to its reply's end


class ServerLog:
    """The calls in the server's log file, read on from where the last read ended."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read_to = 0

    def calls(self) -> list[ServedCall]:
        with open(self.path, encoding="utf-8", errors="replace") as log:
            log.seek(self.read_to)
            text = log.read()
            self.read_to = log.tell()
        calls, start = [], 0
        for end in _CALL_END.finditer(text):
            chunk, start = text[start : end.start()], end.end()
            evaluated, runs = _PROMPT_EVAL.findall(chunk), _REPLY_EVAL.findall(chunk)
            if evaluated and runs:
                calls.append(_served(evaluated[-1], runs[-1], _REUSED.findall(chunk), float(end.group(1))))
        return calls


class SlotLog:
    """The calls in llama-server's log (`-lv 4`), read on from where the last read ended. Its slots serve calls at
    once, so their lines interleave: each is the task's whose id it names, and a call is whole at its total."""

    _LINE = re.compile(r"\| task (\d+) \| (.*)$", re.MULTILINE)
    _SENT = re.compile(r"new prompt, .*task\.n_tokens = (\d+)")
    _TIMES = re.compile(r"^(prompt eval|\s*eval|\s*total) time =\s*([\d.]+) ms /\s*(\d+) tokens")

    def __init__(self, path: Path, lag: float = LOG_LAG) -> None:
        self.path = path
        self.lag = lag
        self.read_to = 0
        self.pending: dict[str, dict[str, float]] = {}

    def calls(self) -> list[ServedCall]:
        """The calls whole since the last read. The server writes its log from a thread of its own, so a call
        already answered may not be in it yet: a task begun is waited for, up to `lag` seconds."""
        calls = self._read()
        deadline = time.monotonic() + self.lag
        while self.pending and time.monotonic() < deadline:
            time.sleep(0.1)
            calls += self._read()
        return calls

    def _read(self) -> list[ServedCall]:
        with open(self.path, encoding="utf-8", errors="replace") as log:
            log.seek(self.read_to)
            text = log.read()
            self.read_to = log.tell()
        calls = []
        for task, said in self._LINE.findall(text):
            known = self.pending.setdefault(task, {})
            if sent := self._SENT.search(said):
                known["sent"] = float(sent.group(1))
            elif times := self._TIMES.match(said):
                name, milliseconds, tokens = times.group(1).strip(), times.group(2), times.group(3)
                known[name] = float(milliseconds if name == "total" else tokens)
            if "total" in known and "sent" in known:
                calls.append(_slot_call(self.pending.pop(task)))
        return calls


def _slot_call(known: dict[str, float]) -> ServedCall:
    return ServedCall(
        sent=int(known["sent"]),
        evaluated=int(known["prompt eval"]),
        reply_tokens=int(known["eval"]),
        seconds=known["total"] / 1000,
    )


def _served(evaluated: str, runs: str, reused: list[str], total_ms: float) -> ServedCall:
    """A call from its log lines. Of their timings only the total is taken: the log's split of it into the
    prompt's evaluation and the reply's may leave most of it out (a call of 27.8 s said 11.6 s and 0.6 s)."""
    return ServedCall(
        sent=int(evaluated) + (int(reused[-1]) if reused else 0),
        evaluated=int(evaluated),
        reply_tokens=int(runs),
        seconds=total_ms / 1000,
    )


@dataclass(frozen=True)
class Rates:
    """The server's rates just after a run, tokens per second of its whole time on a call: evaluating a prompt of
    the run's it has not seen (asked for one token), and writing a reply with no grammar to a prompt it has just
    evaluated."""

    prompt: float
    reply: float


def _ask(api_base: str, prompt: str, max_tokens: int, schema: dict | None = None) -> dict:
    """One chat request, as the product makes it (llama-cpp-python's dialect of a schema)."""
    body: dict = {"model": "x", "messages": [{"role": "user", "content": prompt}], "temperature": 0.2}
    body["max_tokens"] = max_tokens
    if schema is not None:
        body["response_format"] = {"type": "json_object", "schema": schema}
    request = urllib.request.Request(
        f"{api_base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=RUN_TIMEOUT) as answer:
        return json.load(answer)


@dataclass(frozen=True)
class Checkout:
    """The code a team runs: this checkout, or the commit --before names (`label` says which)."""

    label: str
    path: Path


@contextmanager
def checked_out(ref: str) -> Iterator[Checkout]:
    """Commit `ref` in a temporary git worktree while the block runs."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), ref], check=True)
        try:
            yield Checkout(f"before ({ref})", path)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=True)


@dataclass(frozen=True)
class Team:
    """One run's setting: the model served, how many agents, the seed, the world and the steps."""

    model: str
    agents: int
    seed: int
    world: Path
    steps: int


def run_team(checkout: Checkout, team: Team, api_base: str, run_dir: Path) -> float:
    """Run the team from `checkout` as a user would; its wall seconds from the first step to the end."""
    command = [sys.executable, "main.py", "--world", str(team.world), "--agents", str(team.agents)]
    command += ["--seed", str(team.seed), "--steps", str(team.steps), "--model", team.model]
    command += ["--api-base", api_base, "--reply-format", "json", "--decide", "goals", "--no-preflight"]
    command += ["--timeout", str(RUN_TIMEOUT), "--run-dir", str(run_dir), "-q"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, cwd=checkout.path, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"local_model.py: {checkout.label}'s run failed ({done.returncode}): {done.stderr[-800:]}")
    # The summary's wall time is already counted from the first step's start (explorer/run/runner.py).
    return json.loads((run_dir / "summary.json").read_text())["wall_seconds"]


def probe_rates(api_base: str, prompts: list[str], log: ServerLog | SlotLog) -> tuple[Rates, dict[str, float]]:
    """The server's rates (Rates), and its seconds per reply token with the goals schema and without, on prompts of
    the run: each asked cold for one token, then again (all but reused) without the schema, and with it."""
    cold, free, constrained = [], [], []
    for prompt in prompts:
        unseen = f"Asked at {time.time_ns()}.\n{prompt}"  # no earlier prompt begins so
        _ask(api_base, unseen, 1)
        _ask(api_base, unseen, PROBE_REPLY)
        _ask(api_base, unseen, PROBE_REPLY, _goal_schema_of(prompt))
        first, without, with_schema = log.calls()
        cold.append(first)
        free.append(without)
        constrained.append(with_schema)
    rates = Rates(
        prompt=round(sum(c.evaluated for c in cold) / sum(c.seconds for c in cold), 1),
        reply=round(sum(c.reply_tokens for c in free) / sum(c.seconds for c in free), 1),
    )
    per_token = {kind: _per_token(calls) for kind, calls in (("with", constrained), ("without", free))}
    return rates, per_token


def _per_token(calls: list[ServedCall]) -> float:
    return round(sum(c.seconds for c in calls) / sum(c.reply_tokens for c in calls), 4)


def _goal_schema_of(prompt: str) -> dict:
    return goal_schema(sorted(set(re.findall(r"^- (G\d+):", prompt, re.MULTILINE))))


@dataclass
class RunFigures:
    """One run's figures: the server's calls, and what the run's own files say."""

    code: str
    model: str
    agents: int
    seed: int
    load: tuple[float, float]  # the machine's 1-minute load average at the run's start and end
    rates: Rates
    calls: list[ServedCall]
    latencies: list[float]  # each call's, as the agent saw it
    reply_tokens: list[int]  # each decision's, its re-prompt's too
    agent_steps: int
    step_seconds: float  # wall time from the first step to the end
    echoed: int  # replies' messages and reasons left out for giving back their prompt's instructions
    echoes_kept: int  # decisions whose message or reason gives back their prompt's instructions still
    asked_because: dict[str, int]  # why the model was asked again, as the steps' notes say
    grammar: dict  # seconds per reply token, with the schema and without (probe_rates)
    probed: list[str]  # the prompts probe_rates asked again


def run_figures(run_dir: Path) -> dict:
    """What a run's trace says of its model calls and decisions."""
    lines = list(TraceLines(run_dir / "trace.jsonl"))
    calls = [call for line in lines for call in line["llm"]["calls"] if call["error"] is None]
    decided = [line for line in lines if line["llm"]["calls"] and line["decision"]]
    return {
        "latencies": [call["latency"] for call in calls],
        "reply_tokens": [sum(call["completion_tokens"] for call in line["llm"]["calls"]) for line in decided],
        "echoed": sum(len(call.get("echoed", ())) for call in calls),
        "echoes_kept": sum(_keeps_an_echo(line) for line in decided),
        "asked_because": dict(Counter(why for line in lines for why in _reasons_to_ask(line["notes"]))),
        "prompts": [line["prompt"] for line in decided],
    }


def _keeps_an_echo(line: dict) -> bool:
    instructions = instruction_text(line["prompt"])
    return any(repeats_instructions(line["decision"].get(name, ""), instructions) for name in ECHOED_FIELDS)


def _reasons_to_ask(notes: list[str]) -> list[str]:
    """Why the goal loop asked the model ("Agent2 wrote to me; 10 steps since I was last asked; chose G1"),
    each reason with the teammate's name left out."""
    asked = [note.rsplit("; chose ", 1)[0] for note in notes if "; chose G" in note]
    return [re.sub(r"^Agent\d+ ", "a teammate ", why) for note in asked for why in note.split("; ")]


def measure_run(checkout: Checkout, team: Team, api_base: str, log: ServerLog | SlotLog) -> RunFigures:
    """One team's run from `checkout`; then some of its prompts asked again, with the schema and without."""
    log.calls()  # what came before is not this run's
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        run_dir = Path(folder) / "run"
        step_seconds = run_team(checkout, team, api_base, run_dir)
        calls, figures = log.calls(), run_figures(run_dir)
        agent_steps = sum(json.loads((run_dir / "summary.json").read_text())["steps"].values())
    probed = figures.pop("prompts")[:GRAMMAR_PROBES]
    rates, grammar = probe_rates(api_base, probed, log)
    return RunFigures(
        code=checkout.label,
        model=team.model,
        agents=team.agents,
        seed=team.seed,
        load=(round(load, 2), round(os.getloadavg()[0], 2)),
        rates=rates,
        calls=calls,
        agent_steps=agent_steps,
        step_seconds=step_seconds,
        grammar=grammar,
        probed=probed,
        **figures,
    )


def row(runs: list[RunFigures]) -> dict:
    """A condition's figures over its runs (its seeds): the calls' tokens and seconds, and their floors."""
    calls = [call for run in runs for call in run.calls]
    floors = [_floor(call, run.rates) for run in runs for call in run.calls]
    latencies = [x for run in runs for x in run.latencies]
    reply_tokens = [t for run in runs for t in run.reply_tokens]
    first = runs[0]
    return {
        "model": first.model,
        "code": first.code,
        "agents": first.agents,
        "seeds": [run.seed for run in runs],
        "load": [run.load for run in runs],
        "calls": len(calls),
        "sent_per_call": _mean(c.sent for c in calls),
        "evaluated_share": round(sum(c.evaluated for c in calls) / sum(c.sent for c in calls), 3),
        "reply_tokens_per_decision": _mean(reply_tokens),
        "reply_tokens_most": max(reply_tokens, default=None),
        "server_seconds_per_call": _mean(c.seconds for c in calls),
        "floor_prompt_seconds_per_call": _mean(c.evaluated / r.rates.prompt for r in runs for c in r.calls),
        "floor_reply_seconds_per_call": _mean(c.reply_tokens / r.rates.reply for r in runs for c in r.calls),
        "server_vs_floor": round(sum(c.seconds for c in calls) / sum(floors), 2),
        "call_vs_floor": round(sum(latencies) / sum(floors), 2) if first.agents == 1 else None,
        "grammar_seconds_per_token": {k: _mean(r.grammar[k] for r in runs) for k in ("with", "without")},
        "agent_steps_per_minute": round(60 * sum(r.agent_steps for r in runs) / sum(r.step_seconds for r in runs), 2),
        # The most a server could give these prompts and asks: its calls one after another, each at its floor,
        # and the team's own work free.
        "floor_agent_steps_per_minute": round(60 * sum(r.agent_steps for r in runs) / sum(floors), 2),
        "calls_per_agent_step": round(len(calls) / sum(r.agent_steps for r in runs), 3),
        "echoed": sum(run.echoed for run in runs),
        "echoes_kept": sum(run.echoes_kept for run in runs),
        "decisions": len(reply_tokens),
        "asked_because": dict(sum((Counter(run.asked_because) for run in runs), Counter())),
        "rates": [asdict(run.rates) for run in runs],
    }


def _floor(call: ServedCall, rates: Rates) -> float:
    return call.evaluated / rates.prompt + call.reply_tokens / rates.reply


def _mean(values: Iterator[float] | list[float]) -> float | None:
    values = list(values)
    return round(statistics.mean(values), 3) if values else None


@dataclass(frozen=True)
class Conditions:
    """What the bench runs: the models, on which server, the teams, the seeds, the world and the steps."""

    models: list[LocalModel]
    server: ModelServer
    world: str
    teams: list[int]
    seeds: list[int]
    steps: int


def server_log(server: ModelServer, path: Path) -> ServerLog | SlotLog:
    return SlotLog(path) if server is LLAMA_SERVER else ServerLog(path)


def measure(conditions: Conditions, before: str | None) -> dict:
    """Every condition's runs, the code of `before` (if given) and this checkout's back to back, each on the
    same server; the rows, and the ratios of after to before."""
    runs: dict[tuple[str, str, int], list[RunFigures]] = {}
    threads: dict[str, dict] = {}
    this = Checkout("after", ROOT)
    with tempfile.TemporaryDirectory() as folder, _maybe_checked_out(before) as old:
        world = seeded_world(SHIPPED_WORLDS / f"{conditions.world}.yaml", folder)
        for model in conditions.models:
            log_path = Path(folder) / f"{model.name}.log"
            with serving(log_path, model, server=conditions.server) as api_base:
                log = server_log(conditions.server, log_path)
                warm_up(api_base, log)
                for agents in conditions.teams:
                    for seed in conditions.seeds:
                        team = Team(f"openai/{model.name}", agents, seed, world, conditions.steps)
                        for checkout in [c for c in (old, this) if c is not None]:
                            figures = measure_run(checkout, team, api_base, log)
                            runs.setdefault((model.name, checkout.label, agents), []).append(figures)
                            print(_progress(figures), file=sys.stderr, flush=True)
            threads[model.name] = compare_threads(model, conditions.server, figures.probed, Path(folder))
    rows = [row(condition) for condition in runs.values()]
    compared = _compared(rows)
    return {
        "server": conditions.server.name,
        "world": conditions.world,
        "seeds": conditions.seeds,
        "steps": conditions.steps,
        "rows": rows,
        "after_vs_before": compared,
        "threads": threads,
    }


def compare_threads(model: LocalModel, server: ModelServer, prompts: list[str], folder: Path) -> dict:
    """The server's rates (probe_rates) on its own threads (llama-cpp-python's: half the cores for a reply) and on
    every core for a reply, as `--n_threads N` (`--threads N`) has it: the same prompts, asked of the two servers
    in turn."""
    cores = str(os.cpu_count() or 1)
    options = {"default": [], f"{server.threads_option} {cores}": [server.threads_option, cores]}
    found: dict[str, list[Rates]] = {name: [] for name in options}
    with contextlib.ExitStack() as stack:
        servers = {}
        for name, given in options.items():
            log_path = folder / f"threads {name}.log"
            api_base = stack.enter_context(serving(log_path, model, given, server))
            servers[name] = (api_base, server_log(server, log_path))
            warm_up(*servers[name])
        for prompt in prompts:
            for name, (api_base, log) in servers.items():
                found[name].append(probe_rates(api_base, [prompt], log)[0])
    return {
        name: {
            "prompt_tokens_per_second": _mean(r.prompt for r in rates),
            "reply_tokens_per_second": _mean(r.reply for r in rates),
        }
        for name, rates in found.items()
    }


def warm_up(api_base: str, log: ServerLog | SlotLog) -> None:
    """A new server's first call is seconds slower than any after it: made, and left out."""
    _ask(api_base, "Hello.", 1)
    log.calls()


@contextmanager
def _maybe_checked_out(ref: str | None) -> Iterator[Checkout | None]:
    if ref is None:
        yield None
        return
    with checked_out(ref) as checkout:
        yield checkout


def _progress(run: RunFigures) -> str:
    evaluated = sum(c.evaluated for c in run.calls) / max(sum(c.sent for c in run.calls), 1)
    return (
        f"{run.model} {run.code} {run.agents} agents seed {run.seed}: {len(run.calls)} calls, "
        f"{evaluated:.0%} of the prompt evaluated, {60 * run.agent_steps / run.step_seconds:.1f} agent-steps/min, "
        f"load {run.load}"
    )


def _compared(rows: list[dict]) -> list[dict]:
    """For each model and team run both before and after: after's agent-steps per minute over before's, and
    the share of the prompt each evaluated."""
    after = {(r["model"], r["agents"]): r for r in rows if r["code"] == "after"}
    pairs = [(r, after.get((r["model"], r["agents"]))) for r in rows if r["code"] != "after"]
    return [
        {
            "model": old["model"],
            "agents": old["agents"],
            "agent_steps_per_minute": [old["agent_steps_per_minute"], new["agent_steps_per_minute"]],
            "speed_up": round(new["agent_steps_per_minute"] / old["agent_steps_per_minute"], 2),
            "floor_speed_up": round(new["floor_agent_steps_per_minute"] / old["agent_steps_per_minute"], 2),
            "evaluated_share": [old["evaluated_share"], new["evaluated_share"]],
            "reply_tokens_per_decision": [old["reply_tokens_per_decision"], new["reply_tokens_per_decision"]],
            "echoes_kept": [old["echoes_kept"], new["echoes_kept"]],
        }
        for old, new in pairs
        if new is not None
    ]


def markdown_table(result: dict) -> str:
    header = (
        "| model | code | agents | calls | prompt tokens sent / call | evaluated | reply tokens / decision (most) "
        "| server s / call | floor: prompt s / call | floor: reply s / call | server / floor | call / floor "
        "| s / reply token, grammar on / off | agent-steps / min | at the floor | calls / agent-step "
        "| echoes left out | decisions keeping one |"
    )
    lines = [header, "|" + "---|" * 18]
    for r in result["rows"]:
        cells = [r["model"], r["code"], r["agents"], r["calls"], r["sent_per_call"], f"{r['evaluated_share']:.0%}"]
        cells += [f"{r['reply_tokens_per_decision']} ({r['reply_tokens_most']})", r["server_seconds_per_call"]]
        cells += [r["floor_prompt_seconds_per_call"], r["floor_reply_seconds_per_call"]]
        cells += [f"{r['server_vs_floor']}x", _times(r["call_vs_floor"])]
        grammar = r["grammar_seconds_per_token"]
        cells += [f"{grammar['with']} / {grammar['without']}"]
        cells += [r["agent_steps_per_minute"], r["floor_agent_steps_per_minute"], r["calls_per_agent_step"]]
        cells += [r["echoed"], r["echoes_kept"]]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines)


def threads_table(result: dict) -> str:
    lines = ["| model | server | prompt tokens / s | reply tokens / s |", "|---|---|---|---|"]
    for model, servers in result["threads"].items():
        for name, rates in servers.items():
            lines.append(
                f"| {model} | {name} | {rates['prompt_tokens_per_second']} | {rates['reply_tokens_per_second']} |"
            )
    return "\n".join(lines)


def _times(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio}x"


def add_team_arguments(parser: argparse.ArgumentParser, teams: tuple[int, ...] = TEAMS) -> None:
    """The models served and the teams run: this bench's options, and bench/prompt_reuse_limit.py's."""
    parser.add_argument("--models", nargs="+", choices=LOCAL_MODELS, default=list(LOCAL_MODELS))
    parser.add_argument("--teams", nargs="+", type=int, default=list(teams))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--steps", type=int, default=STEPS)


def installed_models(names: list[str], server: ModelServer = LLAMA_CPP_PYTHON) -> list[LocalModel]:
    """The models `names` names; exit with what to install where one is missing."""
    models = [LOCAL_MODELS[name] for name in names]
    for model in models:
        if missing := missing_parts(model, server):
            sys.exit(f"{Path(sys.argv[0]).name}: {missing}: {INSTALL}")
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_team_arguments(parser)
    parser.add_argument("--world", choices=sorted(p.stem for p in SHIPPED_WORLDS.glob("*.yaml")), default=WORLD)
    parser.add_argument("--server", choices=MODEL_SERVERS, default=LLAMA_CPP_PYTHON.name)
    parser.add_argument("--before", metavar="REF", help="also run the teams on the code of git commit REF")
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "local_model.json")
    args = parser.parse_args()
    server = MODEL_SERVERS[args.server]
    conditions = Conditions(
        installed_models(args.models, server), server, args.world, args.teams, args.seeds, args.steps
    )
    started = time.perf_counter()
    result = measure(conditions, args.before)
    result["wall_seconds"] = round(time.perf_counter() - started)
    write_figures(args.out, result)
    print(markdown_table(result))
    print(threads_table(result))


if __name__ == "__main__":
    main()
