"""The fixed retrieval set: memory texts and queries from real runs, with fp32's nearest three memories for each.

`python bench/retrieval_set.py` makes bench/retrieval_set.json from the runs in RUNS; bench/int8_embedder.py and
tests/test_onnx_embedder.py measure an embedder's agreement with fp32 on it: the share of queries for which it
finds the same three memories.

The runs are the built-in explorer's, told that it reads its memories, so that each step makes its retrieval
query as a model's step does. A row is one query and the memory its agent held then (its memory texts of the
earlier steps, in order); a query whose agent held three distinct texts or fewer is left out, since its three
nearest are all of them. Retrieval is the app's own (memory/vector_memory.py): exact below 10,000 memories, a
text stored twice found twice.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from explorer.records.run_files import TraceLines

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from explorer.config.keywords import make_config  # noqa: E402
from explorer.policies.offline import OfflineExplorer  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from memory.embedder import DIMENSION, SentenceEmbedder  # noqa: E402
from memory.vector_memory import VectorMemory  # noqa: E402

SET_FILE = ROOT / "bench" / "retrieval_set.json"
TOP_K = 3
RUNS = (
    {"world": "office", "agents": 3, "steps": 25, "seed": 1},
    {"world": "gen:house", "agents": 2, "steps": 30, "seed": 2},
    {"world": "warehouse", "agents": 2, "steps": 30, "seed": 3},
    {"world": "apartment", "agents": 2, "steps": 25, "seed": 4},
)

Encode = Callable[[list[str]], np.ndarray]  # texts in, one L2-normalised row per text out


class ReadingExplorer(OfflineExplorer):
    """The built-in explorer, saying that it reads its memories: each of its steps makes a retrieval query."""

    reads_memories = True


@dataclass(frozen=True)
class Row:
    """One query of the set, the memory texts its agent held then, and fp32's nearest three of them."""

    query: str
    memories: tuple[str, ...]
    fp32_top: tuple[str, ...]


def run_rows(settings: dict, embedder: SentenceEmbedder, workdir: Path) -> list[tuple[str, list[str]]]:
    """(query, the memory texts held then) for each step of one run whose agent held more than TOP_K texts."""
    run_dir = Path(tempfile.mkdtemp(dir=workdir))
    config = make_config(run_dir=run_dir, **settings)
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary table
        ExplorationRun(config, embedder=embedder, policy_factory=lambda *_: ReadingExplorer()).execute()
    held: dict[str, list[str]] = {}
    rows = []
    for line in list(TraceLines(run_dir / "trace.jsonl")):
        memories = held.setdefault(line["agent_id"], [])
        if len(set(memories)) > TOP_K:
            rows.append((line["memory_query"], list(memories)))
        memories.append(line["memory_text"])
    return rows


def nearest(encode: Encode, queries: Sequence[tuple[str, Sequence[str]]]) -> list[list[str]]:
    """The TOP_K memory texts nearest each query, as the app retrieves them, with rows from `encode`."""
    texts = sorted({t for query, memories in queries for t in (query, *memories)})
    vectors = dict(zip(texts, encode(texts)))
    found = []
    for query, memories in queries:
        # VectorMemory reads only its embedder's dimension until it encodes, which it does not here.
        memory = VectorMemory(SimpleNamespace(dimension=DIMENSION))
        memory.add_many(memories, np.stack([vectors[t] for t in memories]))
        found.append([text for text, _ in memory.search_vector(vectors[query], TOP_K)])
    return found


def load_set(path: Path = SET_FILE) -> list[Row]:
    data = json.loads(path.read_text())
    texts = data["texts"]
    return [
        Row(texts[row["query"]], tuple(texts[i] for i in row["memories"]), tuple(texts[i] for i in row["fp32_top"]))
        for row in data["rows"]
    ]


def agreement(encode: Encode, rows: Sequence[Row]) -> dict[str, float | int]:
    """How often `encode`'s nearest three are fp32's: as the same three memories, and in the same order."""
    found = nearest(encode, [(row.query, row.memories) for row in rows])
    same = sum(Counter(mine) == Counter(row.fp32_top) for mine, row in zip(found, rows))
    ordered = sum(tuple(mine) == row.fp32_top for mine, row in zip(found, rows))
    return {"queries": len(rows), "same_three": round(same / len(rows), 4), "same_order": round(ordered / len(rows), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=figures_path, default=SET_FILE)
    args = parser.parse_args()
    embedder = SentenceEmbedder("onnx")  # fp32: the reference
    queries = []
    with tempfile.TemporaryDirectory() as workdir:
        for settings in RUNS:
            queries += run_rows(settings, embedder, Path(workdir))
    tops = nearest(embedder.encode, queries)
    texts = sorted({t for query, memories in queries for t in (query, *memories)})
    number = {text: i for i, text in enumerate(texts)}
    rows = [
        {"query": number[query], "memories": [number[t] for t in memories], "fp32_top": [number[t] for t in top]}
        for (query, memories), top in zip(queries, tops)
    ]
    write_figures(
        args.out, {"command": command_line("retrieval_set.py"), "runs": list(RUNS), "texts": texts, "rows": rows}
    )
    print(f"{len(rows)} queries over {len(texts)} distinct texts written to {args.out}")


if __name__ == "__main__":
    main()
