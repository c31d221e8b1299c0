"""Time that counts thinking: `python bench/realtime.py` prints the tables and writes bench/realtime.json.

Throughput. 16 and 32 model agents in mock mode (real embeddings), each
choosing every action (a reflex walker: forward unless a wall is just ahead,
sometimes a turn), behind a stub OpenAI-compatible server whose every answer
takes a lognormal time (median 0.5 s, sigma 0.6: a mean of 0.6 s), for STEPS
steps each, under --schedule realtime and --schedule lockstep, over several
latency draws. The figure is agent-steps per second over the run (its wall
time from the first step), against the ideal: agents / mean latency, as if no
agent ever waited for another, and against the model's pace: the same runs'
drawn latencies, the run's agent-steps over the longest time one agent's
draws add up to (what the run would take if the CPU cost nothing; a 30-step
run's slowest agents end alone, so this is below agents / mean latency).

Bound (issue 51). 32 model agents under lock-step behind a model that
answers every call in a fixed 0.5 s, and the same team behind one that
answers at once (its CPU floor: a step's work for the whole team when the
model costs nothing), run one after the other in this process: seconds per
step after the first, against max(0.5 s, the floor) and against 0.5 s plus
the floor (what lock-step allows when nothing overlaps). Then lock-step's own
limit: the same team behind a model answering in 2 s, long enough that no
reply comes back while the round's calls are still going out. From the
stub's arrival times, a round's spread (its first call to its last: the
team's work before a call, which cannot start before the round does) and
its tail (the last reply to the next round's first call: the work after a
call, the commit, and the first agent's work before its next call). No
schedule of a round's work brings a step under 0.5 s + spread + tail.

Replay. Realtime runs of 8 agents with different latency draws, each then
replayed with --replay-replies and no model: whether the replay's trace is
the recorded one but for the nodes' wall times, and how many steps each run
committed out of lock-step's order.

Think time. 4 agents choosing goals (--decide goals: the planner walks to
the goal a model picks) on the office world under --schedule event with
think_time: measured, behind a stub that answers in 0.2 s and one that
answers in 2 s: the simulated seconds and the steps to 90% of the objects,
and whether a replay gives the same trace again.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.records.run_files import TraceLines  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.testing.chat_server import ChatServer, Scripted  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402

MODEL = "openai/stub-model"
WORLD = SHIPPED_WORLDS / "office.yaml"
MEDIAN, SIGMA = 0.5, 0.6  # the stub's latency: lognormal
MEAN_LATENCY = MEDIAN * math.exp(SIGMA**2 / 2)  # 0.599 s
TEAMS = (16, 32)
STEPS = 30
SEEDS = (1, 2, 3)
REPLAY_AGENTS, REPLAY_STEPS = 8, 10
THINK_AGENTS, THINK_SECONDS = 4, 90  # --steps is the run's end in simulated seconds
THINKERS = {"fast": 0.2, "slow": 2.0}  # seconds a stub takes to answer
SHARE = "90%"
BOUND_AGENTS, BOUND_STEPS, BOUND_SECONDS = 32, 10, 0.5  # lock-step behind a fixed 0.5 s model
APART_SECONDS = 2.0  # a model slow enough that a round's calls have all gone out before any reply comes back

Answer = Callable[[dict], Scripted]


def reflex_walker(
    seed: int, latency: Callable[[random.Random], float], drawn: dict[str, float] | None = None
) -> Answer:
    """A stub's answers: forward unless a wall is just ahead, a turn now and then; each after `latency(rng)`,
    added up per agent in `drawn` (if given)."""
    rng, lock = random.Random(seed), threading.Lock()

    def answer(request: dict) -> Scripted:
        prompt = request["messages"][-1]["content"]
        asker = re.search(r"You are (\S+),", prompt)
        with lock:
            chance, delay = rng.random(), latency(rng)
            if drawn is not None and asker:
                drawn[asker.group(1)] = drawn.get(asker.group(1), 0.0) + delay
        turn = "A wall is 1 cell ahead" in prompt or chance < 0.2
        action = ("look_left" if chance < 0.6 else "look_right") if turn else "forward"
        return Scripted(text=f"```yaml\naction: {action}\nreason: walking\nmessage_to_others: ''\n```", delay=delay)

    return answer


def goal_picker(seconds: float) -> Answer:
    """A stub's answers in goals mode: the first goal offered (the nearest), after `seconds`."""
    return lambda request: Scripted(text="```yaml\ngoal: G1\nreason: the nearest\n```", delay=seconds)


def fixed(seconds: float) -> Callable[[random.Random], float]:
    return lambda rng: seconds


def lognormal(rng: random.Random) -> float:
    return rng.lognormvariate(math.log(MEDIAN), SIGMA)


def run(run_dir: Path, embedder: SentenceEmbedder, answer: Answer | None, **settings: object) -> dict:
    """One run, against a stub answering `answer` (none for a replay); its summary."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        api_base = stack.enter_context(ChatServer(answer)).api_base if answer else None
        config = RunConfig.of(world=WORLD, model=MODEL, run_dir=run_dir, verbosity=-1, api_base=api_base, **settings)
        return ExplorationRun(config.check(), embedder=embedder).execute()


def comparable(trace: list[dict]) -> list[dict]:
    """A trace but for what a replay cannot repeat: the nodes' wall times and what each call cost."""
    costs = ("latency", "retries", "cost_usd", "replayed")
    return [
        {
            **{k: v for k, v in line.items() if k != "timings"},
            "llm": {"calls": [{k: v for k, v in c.items() if k not in costs} for c in line["llm"]["calls"]]},
        }
        for line in trace
    ]


def throughput(directory: Path, embedder: SentenceEmbedder, steps: int, seeds: tuple[int, ...]) -> list[dict]:
    rows = []
    for agents in TEAMS:
        ideal = agents / MEAN_LATENCY
        for schedule in ("realtime", "lockstep"):
            rates, paces, steady, waiting, latencies = [], [], [], [], []
            for seed in seeds:
                run_dir = directory / f"{schedule}-{agents}-{seed}"
                settings = {"agents": agents, "steps": steps, "seed": seed, "schedule": schedule}
                drawn: dict[str, float] = {}
                summary = run(run_dir, embedder, reflex_walker(seed, lognormal, drawn), **settings)
                trace = list(TraceLines(run_dir / "trace.jsonl"))
                calls = [c["latency"] for line in trace for c in line["llm"]["calls"]]
                agent_steps = sum(summary["steps"].values())
                rates.append(agent_steps / summary["wall_seconds"])
                # The model's pace: the run as long as its slowest agent's draws, as if the CPU cost nothing.
                paces.append(rates[-1] / (agent_steps / max(drawn.values())))
                waiting.append(sum(calls) / (agents * summary["wall_seconds"]))
                steady += [steady_rate(trace)] if schedule == "realtime" else []
                latencies += calls
            rate = statistics.mean(rates)
            rows.append(
                {
                    "agents": agents,
                    "schedule": schedule,
                    "runs": len(seeds),
                    "agent_steps_per_second": round(rate, 2),
                    "per_run": [round(r, 2) for r in rates],
                    "ideal": round(ideal, 2),
                    "share_of_ideal": round(rate / ideal, 3),
                    "share_of_model_pace": round(statistics.mean(paces), 3),
                    # Until the first agent's last step: the team at full strength, without the end's stragglers.
                    "steady_share_of_ideal": round(statistics.mean(steady) / ideal, 3) if steady else None,
                    # Of the agents' time, the share spent waiting on the model.
                    "model_wait_share": round(statistics.mean(waiting), 3),
                    "mean_call_seconds": round(statistics.mean(latencies), 3),
                }
            )
            print(f"  {agents} agents, {schedule}: {rate:.2f} agent-steps/s ({rate / ideal:.0%} of {ideal:.1f})")
    return rows


def bound(directory: Path, embedder: SentenceEmbedder, seeds: tuple[int, ...]) -> list[dict]:
    """Per seed: the lock-step team's seconds per step behind the fixed model and behind one answering at once,
    and lock-step's limit behind the fixed model."""
    rows = []
    for seed in seeds:
        settings = {"agents": BOUND_AGENTS, "steps": BOUND_STEPS, "seed": seed, "schedule": "lockstep"}
        per_step = {}
        for name, seconds in (("floor", 0.0), ("model", BOUND_SECONDS)):
            summary = run(directory / f"bound-{name}-{seed}", embedder, reflex_walker(seed, fixed(seconds)), **settings)
            start = summary["startup"]
            first = start["first_step_done_seconds"] - start["first_step_started_seconds"]
            per_step[name] = (summary["wall_seconds"] - first) / (max(summary["steps"].values()) - 1)
        floor, step = per_step["floor"], per_step["model"]
        spread, tail = round_apart(directory / f"bound-apart-{seed}", embedder, seed, settings)
        limit = BOUND_SECONDS + spread + tail
        rows.append(
            {
                "seed": seed,
                "seconds_per_step": round(step, 3),
                "cpu_floor_seconds": round(floor, 3),
                "times_bound": round(step / max(BOUND_SECONDS, floor), 2),
                "times_lockstep_bound": round(step / (BOUND_SECONDS + floor), 2),
                "send_spread_seconds": round(spread, 3),
                "tail_seconds": round(tail, 3),
                "lockstep_limit_seconds": round(limit, 3),
                "limit_times_bound": round(limit / max(BOUND_SECONDS, floor), 2),
            }
        )
        print(
            f"  seed {seed}: {step:.2f} s a step, CPU floor {floor:.2f} s: {rows[-1]['times_bound']}x the bound; "
            f"lock-step's limit {limit:.2f} s: {rows[-1]['limit_times_bound']}x"
        )
    return rows


def round_apart(run_dir: Path, embedder: SentenceEmbedder, seed: int, settings: dict) -> tuple[float, float]:
    """Behind a model answering in APART_SECONDS: the median spread of a round's calls (first to last) and
    its median tail (the last reply to the next round's first call), rounds after the first."""
    arrivals: dict[int, list[float]] = {}
    walker = reflex_walker(seed, fixed(APART_SECONDS))

    def answer(request: dict) -> Scripted:
        step = int(re.search(r"## Step (\d+)", request["messages"][-1]["content"]).group(1))
        arrivals.setdefault(step, []).append(time.monotonic())
        return walker(request)

    run(run_dir, embedder, answer, **settings)
    rounds = [(min(times), max(times)) for _, times in sorted(arrivals.items())][1:]
    spreads = [last - first for first, last in rounds]
    tails = [nxt[0] - (last + APART_SECONDS) for (_, last), nxt in itertools.pairwise(rounds)]
    return statistics.median(spreads), statistics.median(tails)


def steady_rate(trace: list[dict]) -> float:
    """A realtime run's agent-steps per second until its first agent took its last step."""
    last = {line["agent_id"]: line["commit_time"] for line in trace}
    until = min(last.values())
    return sum(line["commit_time"] <= until for line in trace) / until


def out_of_round(trace: list[dict]) -> int:
    """How many steps were committed before a step of an earlier round (lock-step's order would have none)."""
    rounds = [line["step"] for line in trace]
    return sum(any(later < step for later in rounds[i + 1 :]) for i, step in enumerate(rounds))


def replays(directory: Path, embedder: SentenceEmbedder, seeds: tuple[int, ...]) -> list[dict]:
    rows = []
    for seed in seeds:
        settings = {"agents": REPLAY_AGENTS, "steps": REPLAY_STEPS, "seed": 1, "schedule": "realtime"}
        recorded = directory / f"replay-recorded-{seed}"
        run(recorded, embedder, reflex_walker(seed, lambda rng: rng.uniform(0.0, 0.2)), **settings)
        replayed = directory / f"replay-{seed}"
        run(replayed, embedder, None, replay_replies=recorded, **settings)
        trace = list(TraceLines(recorded / "trace.jsonl"))
        same = comparable(list(TraceLines(replayed / "trace.jsonl"))) == comparable(trace)
        rows.append({"draw": seed, "agent_steps": len(trace), "out_of_round": out_of_round(trace), "identical": same})
        print(f"  draw {seed}: {len(trace)} steps, {rows[-1]['out_of_round']} out of round, identical: {same}")
    return rows


def thinking(directory: Path, embedder: SentenceEmbedder, seeds: tuple[int, ...]) -> list[dict]:
    rows = []
    profiles = directory / "think.yaml"
    profiles.write_text("default: {think_time: measured}\n")
    for name, seconds in THINKERS.items():
        for seed in seeds:
            settings = {
                "agents": THINK_AGENTS,
                "steps": THINK_SECONDS,
                "seed": seed,
                "schedule": "event",
                "decide": "goals",
                "profiles": profiles,
            }
            recorded = directory / f"think-{name}-{seed}"
            team = run(recorded, embedder, goal_picker(seconds), **settings)["team"]
            replayed = directory / f"think-{name}-{seed}-replay"
            replay_team = run(replayed, embedder, None, replay_replies=recorded, **settings)["team"]
            trace = list(TraceLines(recorded / "trace.jsonl"))
            same = comparable(list(TraceLines(replayed / "trace.jsonl"))) == comparable(trace) and replay_team == team
            reached = team["seconds_to_objects"][SHARE]
            rows.append(
                {
                    "stub": name,
                    "answer_seconds": seconds,
                    "seed": seed,
                    "seconds_to_90": reached,
                    # The team's steps by then: its agent-steps per agent.
                    "steps_to_90": None
                    if reached is None
                    else round(sum(line["time"] <= reached for line in trace) / THINK_AGENTS, 2),
                    "replay_identical": same,
                }
            )
            print(f"  {name} stub, seed {seed}: {rows[-1]['seconds_to_90']} simulated s to 90%, replay same: {same}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "realtime.json")
    parser.add_argument("--steps", type=int, default=STEPS, help="steps per agent in the throughput runs")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--parts", nargs="+", default=["throughput", "bound", "replay", "think"])
    args = parser.parse_args()
    embedder = SentenceEmbedder()
    embedder.wait_ready()
    seeds, result = tuple(args.seeds), {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        if "throughput" in args.parts:
            print(f"Throughput ({args.steps} steps per agent, latency lognormal: median {MEDIAN} s, sigma {SIGMA}):")
            result["throughput"] = throughput(directory, embedder, args.steps, seeds)
        if "bound" in args.parts:
            print(
                f"Bound ({BOUND_AGENTS} agents, lock-step, {BOUND_STEPS} steps, a model answering in {BOUND_SECONDS} s):"
            )
            result["bound"] = bound(directory, embedder, seeds)
        if "replay" in args.parts:
            print(f"Replay ({REPLAY_AGENTS} agents, {REPLAY_STEPS} steps, --schedule realtime):")
            result["replay"] = replays(directory, embedder, seeds)
        if "think" in args.parts:
            print(f"Think time ({THINK_AGENTS} agents, goals, office, think_time: measured):")
            result["think"] = thinking(directory, embedder, seeds)
    print_tables(result)
    write_figures(args.out, {"steps": args.steps, "seeds": list(seeds), **result})


def print_tables(result: dict) -> None:
    if "throughput" in result:
        print(
            "\n| agents | schedule | agent-steps/s | ideal (agents / mean latency) | share of ideal | "
            "share of the model's pace | until the first agent ends | time waiting on the model |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for row in result["throughput"]:
            steady = f"{row['steady_share_of_ideal']:.0%}" if row["steady_share_of_ideal"] is not None else "-"
            print(
                f"| {row['agents']} | {row['schedule']} | {row['agent_steps_per_second']} | {row['ideal']} | "
                f"{row['share_of_ideal']:.0%} | {row['share_of_model_pace']:.0%} | {steady} | "
                f"{row['model_wait_share']:.0%} |"
            )
    if "bound" in result:
        print(
            "\n| seed | s per step | CPU floor s | x max(0.5 s, floor) | x (0.5 s + floor) | spread s | tail s | "
            "lock-step's limit s | limit x max(0.5 s, floor) |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for row in result["bound"]:
            print(
                f"| {row['seed']} | {row['seconds_per_step']} | {row['cpu_floor_seconds']} | {row['times_bound']} | "
                f"{row['times_lockstep_bound']} | {row['send_spread_seconds']} | {row['tail_seconds']} | "
                f"{row['lockstep_limit_seconds']} | {row['limit_times_bound']} |"
            )
    if "think" in result:
        print("\n| stub answers in | seed | simulated s to 90% | steps to 90% | replay identical |")
        print("|---|---|---|---|---|")
        for row in result["think"]:
            print(
                f"| {row['answer_seconds']} s | {row['seed']} | {row['seconds_to_90']} | {row['steps_to_90']} | "
                f"{row['replay_identical']} |"
            )


if __name__ == "__main__":
    main()
