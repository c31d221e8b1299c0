"""The benchmark: `python bench/run.py` measures, prints a table and writes bench/results.json.

1. agent-steps per second in mock mode (offline model, real embeddings) for 1, 4, 8
   and 16 agents, with the shared batching embedder against a naive baseline in
   which each agent encodes its own texts one at a time;
2. model-call overlap: a local OpenAI-compatible server taking 0.5 s per call,
   1, 8 and 32 agents x 6 steps, wall time against the ideal of steps x 0.5 s;
3. the decision prompt's size at steps 10, 100 and 200;
4. retrieval latency (median, 99th percentile) at 1,000, 10,000 and 100,000 memories;
5. start-up: from the process's start to its first step, as `python main.py` runs.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from explorer.config import RunConfig  # noqa: E402
from explorer.runner import ExplorationRun  # noqa: E402
from explorer.trace import read_trace  # noqa: E402
from memory.embedder import SentenceEmbedder, TextCache  # noqa: E402
from memory.vector_memory import VectorMemory  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402
from tests.openai_stub_server import ChatServer, Scripted  # noqa: E402

WORLD = SHIPPED_WORLDS / "office.yaml"
THROUGHPUT_AGENTS = (1, 4, 8, 16)
THROUGHPUT_STEPS = 20
OVERLAP_AGENTS = (1, 8, 32)
OVERLAP_STEPS = 6
MODEL_SECONDS = 0.5
PROMPT_STEPS = (10, 100, 200)
MEMORY_SIZES = (1_000, 10_000, 100_000)
SEARCHES = 1_000
STARTUP_RUNS = 3
DECISION = "```yaml\nthinking: bench\naction: look_left\nreason: bench\n```"

console = Console()


def explore(workdir, embedder, **settings):
    """One quiet run in this process; returns its summary and run directory."""
    run_dir = Path(tempfile.mkdtemp(dir=workdir))
    if hasattr(embedder, "cache"):  # each run starts cold: an earlier run's texts must not be free
        embedder.cache = TextCache(embedder.cache.size)
    config = RunConfig(world=WORLD, run_dir=run_dir, verbosity=-1, **settings).check()
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary table
        summary = ExplorationRun(config, embedder=embedder).execute()
    return summary, run_dir


def throughput(workdir, shared):
    naive = SentenceEmbedder(batching=False)
    naive.wait_ready()
    rows = []
    for agents in THROUGHPUT_AGENTS:
        row = {"agents": agents}
        for name, embedder in (("batched", shared), ("naive", naive)):
            summary, _ = explore(workdir, embedder, agents=agents, steps=THROUGHPUT_STEPS, seed=1)
            row[name] = round(agents * THROUGHPUT_STEPS / summary["wall_seconds"], 1)
        rows.append(row)
        console.log(f"throughput, {agents} agents: {row}")
    one = rows[0]["batched"]
    for row in rows:
        row["speedup_over_1_agent"] = round(row["batched"] / one, 2)
        row["speedup_over_naive"] = round(row["batched"] / row["naive"], 2)
    return rows


def overlap(workdir, embedder):
    os.environ.setdefault("OPENAI_API_KEY", "bench-placeholder")  # litellm wants one; the server ignores it
    rows = []
    with ChatServer(lambda request: Scripted(text=DECISION, delay=MODEL_SECONDS)) as server:
        # litellm's first call imports it (seconds): not part of any run's overlap.
        explore(workdir, embedder, agents=1, steps=1, model="openai/bench", api_base=server.api_base)
        for agents in OVERLAP_AGENTS:
            summary, _ = explore(
                workdir, embedder, agents=agents, steps=OVERLAP_STEPS, model="openai/bench", api_base=server.api_base
            )
            ideal = OVERLAP_STEPS * MODEL_SECONDS
            rows.append({
                "agents": agents,
                "calls": summary["llm"]["calls"],
                "wall_seconds": summary["wall_seconds"],
                "ideal_seconds": ideal,
                "efficiency": round(ideal / summary["wall_seconds"], 3),
            })
            console.log(f"overlap: {rows[-1]}")
    return rows


def prompt_sizes(workdir, embedder):
    _, run_dir = explore(workdir, embedder, agents=2, steps=max(PROMPT_STEPS), seed=1)
    prompts = {r["step"]: r["prompt"] for r in read_trace(run_dir / "trace.jsonl") if r["agent_id"] == "Agent1"}
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
        rows.append({
            "memories": size,
            "median_ms": round(statistics.median(times) * 1000, 3),
            "p99_ms": round(float(np.percentile(times, 99)) * 1000, 3),
            "fill_seconds": round(fill, 2),
        })
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
    """`python main.py` as a user runs it: to the first step, and to the first step done."""
    runs = []
    for n in range(STARTUP_RUNS):
        run_dir = Path(workdir) / f"startup-{n}"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, str(ROOT / "main.py"), "--agents", "2", "--steps", "1", "-q", "--run-dir", str(run_dir)],
            check=True, capture_output=True, timeout=300,
        )
        total = time.perf_counter() - started
        figures = json.loads((run_dir / "summary.json").read_text())["startup"]
        runs.append({**figures, "process_seconds": round(total, 3)})
        console.log(f"start-up: {runs[-1]}")
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def print_tables(results):
    table = Table(title="1. Agent-steps per second, mock mode, offline model, real embeddings")
    for column in ("agents", "batched", "naive", "vs 1 agent", "vs naive"):
        table.add_column(column, justify="right")
    for row in results["throughput"]:
        table.add_row(*map(str, (row["agents"], row["batched"], row["naive"], row["speedup_over_1_agent"], row["speedup_over_naive"])))
    console.print(table)
    table = Table(title=f"2. Model-call overlap, {MODEL_SECONDS} s per call, {OVERLAP_STEPS} steps")
    for column in ("agents", "calls", "wall s", "ideal s", "efficiency"):
        table.add_column(column, justify="right")
    for row in results["overlap"]:
        table.add_row(*map(str, (row["agents"], row["calls"], row["wall_seconds"], row["ideal_seconds"], row["efficiency"])))
    console.print(table)
    sizes = results["prompt"]["chars"]
    console.print(
        "3. Prompt size (chars): "
        + ", ".join(f"step {step}: {size}" for step, size in sizes.items())
        + f"; step {PROMPT_STEPS[-1]} / step {PROMPT_STEPS[0]} = {results['prompt']['ratio_last_to_first']}"
    )
    table = Table(title="4. Retrieval (search only; query embedding "
                  f"{results['retrieval']['query_embedding_median_ms']} ms median)")
    for column in ("memories", "median ms", "p99 ms"):
        table.add_column(column, justify="right")
    for row in results["retrieval"]["search"]:
        table.add_row(*map(str, (row["memories"], row["median_ms"], row["p99_ms"])))
    console.print(table)
    start = results["startup"]
    console.print(
        f"5. Start-up (median of {STARTUP_RUNS}): first step begins at {start['first_step_started_seconds']} s, "
        f"first step done at {start['first_step_done_seconds']} s, whole 1-step run {start['process_seconds']} s"
    )


def main():
    parser = argparse.ArgumentParser(description="Measure the explorer's speed; prints a table and writes JSON.")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.json", help="where to write the figures")
    args = parser.parse_args()
    results = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}}
    with tempfile.TemporaryDirectory(prefix="bench-") as workdir:
        results["startup"] = startup(workdir)  # first, while this process loads nothing
        embedder = SentenceEmbedder()  # one model for every run below, as in a real run
        embedder.wait_ready()
        results["throughput"] = throughput(workdir, embedder)
        results["overlap"] = overlap(workdir, embedder)
        results["prompt"] = prompt_sizes(workdir, embedder)
        results["retrieval"] = retrieval(embedder)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print_tables(results)
    console.print(f"Figures written to {args.out}")


if __name__ == "__main__":
    main()
