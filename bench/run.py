"""The benchmark: `python bench/run.py` measures, prints tables and writes bench/results.json.

Every throughput is set against a floor the hardware sets, measured in the same run:
the embedding floor, the time the model itself takes to encode the run's own memory
texts and retrieval queries in batches of 64 on every core, per agent-step.

1. mock mode, offline model, real embeddings, 1, 8 and 32 agents: wall time per
   agent-step after the first step, as a multiple of the floor; and the offline
   explorer's decision time;
2. a local OpenAI-compatible server taking 0.5 s per call, 8 and 32 agents: wall
   time per step after the first, as a multiple of its bound, the larger of the
   model's 0.5 s and the CPU floor (agents x the floor per agent-step);
3. the decision prompt's size at steps 10, 100 and 200;
4. retrieval latency (median, 99th percentile) at 1,000, 10,000 and 100,000 memories;
5. start-up with a warm export cache: from the process's start to its first step done,
   as `python main.py` runs, on each embedding backend.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from explorer.records.run_files import TraceLines

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.output import figures_path, write_figures  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.testing.chat_server import ChatServer, Scripted  # noqa: E402
from memory.embedder import SentenceEmbedder, TextCache  # noqa: E402
from memory.vector_memory import VectorMemory  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402

WORLD = SHIPPED_WORLDS / "office.yaml"
THROUGHPUT_AGENTS = (1, 8, 32)
THROUGHPUT_STEPS = 20
LATENCY_AGENTS = (8, 32)
LATENCY_STEPS = 6
MODEL_SECONDS = 0.5
FLOOR_BATCH = 64
PROMPT_STEPS = (10, 100, 200)
MEMORY_SIZES = (1_000, 10_000, 100_000)
SEARCHES = 1_000
STARTUP_RUNS = 3
DECISION = "```yaml\nthinking: bench\naction: look_left\nreason: bench\n```"

console = Console()


def explore(workdir, embedder, **settings):
    """One quiet run in this process; returns its summary and run directory."""
    run_dir = Path(tempfile.mkdtemp(dir=workdir))
    embedder.cache = TextCache(embedder.cache.size)  # each run starts cold: an earlier run's texts must not be free
    config = RunConfig.of(world=WORLD, run_dir=run_dir, verbosity=-1, **settings).check()
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary table
        summary = ExplorationRun(config, embedder=embedder).execute()
    return summary, run_dir


def after_first_step(summary, agents):
    """(seconds per step, seconds per agent-step) once the first step is done."""
    start = summary["startup"]
    first = start["first_step_done_seconds"] - start["first_step_started_seconds"]
    steps = max(summary["steps"].values())
    per_step = (summary["wall_seconds"] - first) / (steps - 1)
    return per_step, per_step / agents


def embedding_floor(embedder, run_dir):
    """Seconds per agent-step the model takes for the run's own texts: its distinct memory texts and
    queries (a repeated text is not encoded again), in batches of up to 64 texts of one token
    length (no padding: a query padded to a memory text's length costs about three times more),
    one pass per core at once."""
    records = [r for r in list(TraceLines(run_dir / "trace.jsonl")) if r.get("memory_text")]
    texts = [r["memory_text"] for r in records] + [r["memory_query"] for r in records if r.get("memory_query")]
    texts = list(dict.fromkeys(texts))
    model = embedder._model  # straight to the model: no cache, no gathering
    lengths = model.token_lengths(texts)
    by_length = {}
    for length, text in zip(lengths, texts):
        by_length.setdefault(length, []).append(text)
    batches = [same[i : i + FLOOR_BATCH] for same in by_length.values() for i in range(0, len(same), FLOOR_BATCH)]
    with ThreadPoolExecutor(embedder.workers) as pool:
        list(pool.map(model.encode, batches[:2]))  # warm
        started = time.perf_counter()
        list(pool.map(model.encode, batches))
        elapsed = time.perf_counter() - started
    return elapsed / len(records), statistics.mean(lengths)


def decision_ms(run_dir):
    """The median and 90th percentile of the decision node's time, in ms."""
    times = sorted(
        r["timings"]["decision"] * 1000 for r in list(TraceLines(run_dir / "trace.jsonl")) if "decision" in r["timings"]
    )
    return round(statistics.median(times), 2), round(times[int(0.9 * (len(times) - 1))], 2)


def throughput(workdir, embedder):
    rows = []
    for agents in THROUGHPUT_AGENTS:
        summary, run_dir = explore(workdir, embedder, agents=agents, steps=THROUGHPUT_STEPS, seed=1)
        _, per_agent_step = after_first_step(summary, agents)
        floor, tokens = embedding_floor(embedder, run_dir)
        median, p90 = decision_ms(run_dir)
        rows.append(
            {
                "agents": agents,
                "agent_steps_per_second": round(1 / per_agent_step, 1),
                "ms_per_agent_step": round(per_agent_step * 1000, 1),
                "floor_ms_per_agent_step": round(floor * 1000, 1),
                "times_floor": round(per_agent_step / floor, 2),
                "mean_tokens_per_text": round(tokens, 1),
                "decision_ms_median": median,
                "decision_ms_p90": p90,
            }
        )
        console.log(f"throughput: {rows[-1]}")
    return rows


def model_latency(workdir, embedder):
    os.environ.setdefault("OPENAI_API_KEY", "bench-placeholder")  # litellm wants one; the server ignores it
    rows = []
    with ChatServer(lambda request: Scripted(text=DECISION, delay=MODEL_SECONDS)) as server:
        # litellm's first call imports it (seconds): not part of any run.
        explore(workdir, embedder, agents=1, steps=1, model="openai/bench", api_base=server.api_base)
        for agents in LATENCY_AGENTS:
            summary, run_dir = explore(
                workdir, embedder, agents=agents, steps=LATENCY_STEPS, model="openai/bench", api_base=server.api_base
            )
            per_step, _ = after_first_step(summary, agents)
            floor, _ = embedding_floor(embedder, run_dir)
            bound = max(MODEL_SECONDS, agents * floor)
            # In lock-step an agent's next model call needs this step's memory and the next query
            # encoded first, for every agent: the model's time and the CPU's then add up.
            lockstep_bound = MODEL_SECONDS + agents * floor
            rows.append(
                {
                    "agents": agents,
                    "calls": summary["llm"]["calls"],
                    "seconds_per_step": round(per_step, 3),
                    "cpu_floor_seconds": round(agents * floor, 3),
                    "bound_seconds": round(bound, 3),
                    "times_bound": round(per_step / bound, 2),
                    "lockstep_bound_seconds": round(lockstep_bound, 3),
                    "times_lockstep_bound": round(per_step / lockstep_bound, 2),
                }
            )
            console.log(f"model latency: {rows[-1]}")
    return rows


def prompt_sizes(workdir, embedder):
    _, run_dir = explore(workdir, embedder, agents=2, steps=max(PROMPT_STEPS), seed=1)
    prompts = {r["step"]: r["prompt"] for r in list(TraceLines(run_dir / "trace.jsonl")) if r["agent_id"] == "Agent1"}
    sizes = {step: len(prompts[step]) for step in PROMPT_STEPS}
    return {"chars": sizes, "ratio_last_to_first": round(sizes[PROMPT_STEPS[-1]] / sizes[PROMPT_STEPS[0]], 3)}


def retrieval(embedder):
    """Search times for one query embedding against N stored memories (random unit vectors)."""
    rng = np.random.default_rng(0)
    rows = []
    for size in MEMORY_SIZES:
        memory = VectorMemory(embedder)
        vectors = _unit(rng.standard_normal((size, embedder.dimension), dtype="float32"))
        started = time.perf_counter()
        memory.add_many([f"memory {i}" for i in range(size)], vectors)
        fill = time.perf_counter() - started
        queries = _unit(rng.standard_normal((SEARCHES, embedder.dimension), dtype="float32"))
        times = []
        for query in queries:
            started = time.perf_counter()
            memory.search_vector(query, top_k=3)
            times.append(time.perf_counter() - started)
        rows.append(
            {
                "memories": size,
                "median_ms": round(statistics.median(times) * 1000, 3),
                "p99_ms": round(float(np.percentile(times, 99)) * 1000, 3),
                "fill_seconds": round(fill, 2),
            }
        )
        console.log(f"retrieval: {rows[-1]}")
    texts = [f"What do I know about position ({i}, 3, 0) facing north with what I see: a desk?" for i in range(200)]
    times = []
    for text in texts:  # distinct texts: the cache must not answer
        started = time.perf_counter()
        embedder.encode([text])
        times.append(time.perf_counter() - started)
    return {"search": rows, "query_embedding_median_ms": round(statistics.median(times) * 1000, 2)}


def _unit(vectors):
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def startup(workdir):
    """`python main.py` as a user runs it, on each backend, the export cache warm: to the first step done."""
    subprocess.run([sys.executable, str(ROOT / "main.py"), "--export-embedder"], check=True, capture_output=True)
    figures = {}
    for backend in ("onnx", "torch"):
        runs = []
        for n in range(STARTUP_RUNS):
            run_dir = Path(workdir) / f"startup-{backend}-{n}"
            started = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "main.py"),
                    "--agents",
                    "2",
                    "--steps",
                    "1",
                    "-q",
                    "--embedder",
                    backend,
                    "--run-dir",
                    str(run_dir),
                ],
                check=True,
                capture_output=True,
                timeout=300,
            )
            total = time.perf_counter() - started
            runs.append(
                {**json.loads((run_dir / "summary.json").read_text())["startup"], "process_seconds": round(total, 3)}
            )
            console.log(f"start-up, {backend}: {runs[-1]}")
        figures[backend] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    return figures


def print_tables(results):
    console.print(_throughput_table(results["throughput"]))
    console.print(_model_latency_table(results["model_latency"]))
    console.print(_prompt_line(results["prompt"]))
    if "retrieval" in results:
        console.print(_retrieval_table(results["retrieval"]))
    for backend, start in results["startup"].items():
        console.print(_startup_line(backend, start))


def _right_aligned_table(title, columns, rows):
    """A table of figures, every column right-aligned; `rows` are tuples of values, shown as text."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*map(str, row))
    return table


def _throughput_table(rows):
    return _right_aligned_table(
        "1. Mock mode, offline model, real embeddings: wall time per agent-step after the first step",
        ("agents", "agent-steps/s", "ms", "floor ms", "x floor", "tokens/text", "decision ms (p90)"),
        [
            (
                row["agents"],
                row["agent_steps_per_second"],
                row["ms_per_agent_step"],
                row["floor_ms_per_agent_step"],
                row["times_floor"],
                row["mean_tokens_per_text"],
                f"{row['decision_ms_median']} ({row['decision_ms_p90']})",
            )
            for row in rows
        ],
    )


def _model_latency_table(rows):
    return _right_aligned_table(
        f"2. A model taking {MODEL_SECONDS} s per call, {LATENCY_STEPS} steps: wall time per step after the first",
        ("agents", "calls", "s per step", "CPU floor s", "bound s", "x bound", "0.5 s + floor", "x that"),
        [
            (
                row["agents"],
                row["calls"],
                row["seconds_per_step"],
                row["cpu_floor_seconds"],
                row["bound_seconds"],
                row["times_bound"],
                row["lockstep_bound_seconds"],
                row["times_lockstep_bound"],
            )
            for row in rows
        ],
    )


def _prompt_line(prompt):
    return (
        "3. Prompt size (chars): "
        + ", ".join(f"step {step}: {size}" for step, size in prompt["chars"].items())
        + f"; step {PROMPT_STEPS[-1]} / step {PROMPT_STEPS[0]} = {prompt['ratio_last_to_first']}"
    )


def _retrieval_table(retrieval):
    return _right_aligned_table(
        f"4. Retrieval (search only; query embedding {retrieval['query_embedding_median_ms']} ms median)",
        ("memories", "median ms", "p99 ms"),
        [(row["memories"], row["median_ms"], row["p99_ms"]) for row in retrieval["search"]],
    )


def _startup_line(backend, start):
    return (
        f"5. Start-up, {backend} (median of {STARTUP_RUNS}, export cache warm): first step begins at "
        f"{start['first_step_started_seconds']} s, done at {start['first_step_done_seconds']} s; "
        f"whole 1-step run {start['process_seconds']} s"
    )


def main():
    parser = argparse.ArgumentParser(description="Measure the explorer's speed; prints tables and writes JSON.")
    parser.add_argument(
        "--out", type=figures_path, default=ROOT / "bench" / "results.json", help="where to write the figures"
    )
    parser.add_argument("--skip-retrieval", action="store_true", help="leave out the 100,000-memory fill (3 minutes)")
    args = parser.parse_args()
    results = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    }
    with tempfile.TemporaryDirectory(prefix="bench-") as workdir:
        results["startup"] = startup(workdir)  # first, while this process loads nothing
        embedder = SentenceEmbedder()  # one model for every run below, as in a real run
        embedder.wait_ready()
        results["throughput"] = throughput(workdir, embedder)
        results["model_latency"] = model_latency(workdir, embedder)
        results["prompt"] = prompt_sizes(workdir, embedder)
        if not args.skip_retrieval:
            results["retrieval"] = retrieval(embedder)
    write_figures(args.out, results)
    print_tables(results)
    console.print(f"Figures written to {args.out}")


if __name__ == "__main__":
    main()
