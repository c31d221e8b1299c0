"""The ONNX Runtime embedder: a one-time export, the same rows as torch, rows that no batch changes, and
retrieval on real runs' memories as fp32's."""

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from bench.retrieval_set import agreement, load_set
from explorer.config.run_config import RunConfig
from explorer.run.runner import ExplorationRun
from explorer.testing.hash_embedder import HashEmbedder
from memory.embedder import SentenceEmbedder
from memory.onnx_export import export_dir
from memory.vector_memory import VectorMemory
from tests.support.in_process import main_here
from tests.support.paths import ROOT
from tests.test_cli import assert_one_line_error, main

OBJECTS = ["bed", "wardrobe", "fridge", "stove", "rose bush", "piano", "desk", "lamp", "sofa", "chair", "oven"]
# Measured here: at most 2.2e-7 between the backends' rows; this bound would catch a wrong export or pooling.
AGREEMENT = 1e-6


def memory_like_texts(count, seed):
    """Texts as the runs write them, of many token lengths, a few past the 256-token limit."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        seen = ", ".join(rng.sample(OBJECTS, rng.randint(0, 4))) or "nothing notable"
        text = f"At position ({i}, {rng.randint(0, 9)}, 0), I saw {seen}. I decided to forward. Reason: step {i}."
        if rng.random() < 0.4:
            text += " | Context from others: " + "; ".join(
                f"Agent{k}: found a {rng.choice(OBJECTS)}" for k in range(rng.randint(1, 30))
            )
        texts.append(text)
    return texts + ["x", "", "word " * 300]


@pytest.fixture(scope="module")
def torch_embedder():
    model = SentenceEmbedder("torch", batching=False)
    model.wait_ready()
    return model


def test_onnx_rows_agree_with_torch_rows(embedder, torch_embedder):
    assert embedder.backend == "onnx" and torch_embedder.backend == "torch"
    texts = memory_like_texts(60, seed=1)
    onnx_rows, torch_rows = embedder.encode(texts), torch_embedder.encode(texts)
    assert onnx_rows.dtype == np.float32 and onnx_rows.shape == torch_rows.shape == (len(texts), 384)
    assert np.abs(onnx_rows - torch_rows).max() < AGREEMENT
    assert np.allclose(np.linalg.norm(onnx_rows, axis=1), 1.0, atol=1e-5)


def test_the_default_embedder_finds_fp32s_nearest_memories_on_the_fixed_set(embedder):
    # bench/retrieval_set.json: queries and memories from real runs, with fp32's nearest three for each.
    # An embedder that does not agree on 90% of them may not be the default (int8 agreed on about half:
    # bench/int8_embedder.json).
    rows = load_set()
    found = agreement(embedder.encode, rows)
    assert found["queries"] == len(rows) >= 200 and found["same_three"] >= 0.9
    assert agreement(HashEmbedder(dimension=384).encode, rows)["same_three"] < 0.5  # it tells embedders apart


def test_onnx_rows_do_not_depend_on_the_batch_they_are_in(embedder):
    """Bypassing the service's grouping: padded batches of mixed lengths give each text its lone row."""
    model = embedder._model
    texts = memory_like_texts(32, seed=2)
    alone = {text: model.encode([text])[0] for text in texts}
    rng = random.Random(3)
    for _ in range(2):
        shuffled = rng.sample(texts, len(texts))
        cuts = sorted(rng.sample(range(1, len(texts)), 5))
        for batch in np.split(np.array(shuffled, dtype=object), cuts):
            rows = model.encode(list(batch))
            for text, row in zip(batch, rows):
                assert np.array_equal(row, alone[text]), text


def test_the_export_is_made_once_ahead_and_runs_load_it_without_torch(in_process, tmp_path):
    cache = tmp_path / "cache"
    # The export in this process, where the torch rows' test has imported torch already; the load and the run
    # after it in processes of their own, which must not import torch.
    first = in_process.run("--export-embedder", "--embedder-cache", str(cache))
    assert first.returncode == 0, first.stderr
    assert "Exporting the embedding model to ONNX, once" in first.stdout
    assert f"Exported to {export_dir(cache)}" in first.stdout and first.stderr == ""
    info = json.loads((export_dir(cache) / "export.json").read_text())
    assert info["max_seq_length"] == 256 and info["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    again = in_process.run("--export-embedder", "--embedder-cache", str(cache))
    assert again.returncode == 0 and "there already" in again.stdout
    assert list(cache.iterdir()) == [export_dir(cache)]  # no leftovers of the work folder

    script = (
        "import sys; from memory.embedder import SentenceEmbedder; "
        f"e = SentenceEmbedder(cache_dir={str(cache)!r}); e.wait_ready(); e.encode(['a lamp on the desk']); "
        "print(sorted({'torch', 'transformers', 'sentence_transformers'} & set(sys.modules)))"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "[]"

    run = main("--agents", "2", "--steps", "2", "--embedder-cache", str(cache), "--run-dir", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    assert "Exporting" not in run.stderr  # warm cache: nothing to announce
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["embedder"]["backend"] == "onnx"


def test_a_first_run_announces_the_export_and_a_cache_that_cannot_be_a_folder_is_one_line(tmp_path):
    cache = tmp_path / "cache"
    run = main("--agents", "1", "--steps", "1", "--embedder-cache", str(cache), "--run-dir", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("Exporting the embedding model to ONNX, once, into ")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    failed = main_here(
        "--agents",
        "1",
        "--steps",
        "1",
        "--embedder-cache",
        str(blocked / "cache"),
        "--run-dir",
        str(tmp_path / "failed"),
        "-q",
    )
    assert_one_line_error(failed, "--embedder-cache", "is a file, not a folder")
    assert not (tmp_path / "failed").exists()


def test_a_torch_run_says_so_and_its_memory_resumes_on_onnx(tmp_path, embedder, torch_embedder):
    config = RunConfig.of(run_dir=tmp_path / "torch", verbosity=-1, agents=2, steps=4, embedder="torch")
    summary = ExplorationRun(config, embedder=torch_embedder).execute()
    assert summary["embedder"]["backend"] == "torch"
    assert json.loads((tmp_path / "torch" / "config.json").read_text())["embedder"] == "torch"
    meta = json.loads((tmp_path / "torch" / "memory" / "Agent1" / "meta.json").read_text())
    assert meta["backend"] == "torch" and meta["count"] == 4
    memory = VectorMemory.load(tmp_path / "torch" / "memory" / "Agent1", embedder)
    assert len(memory) == 4
    text = memory.texts[2]
    assert memory.search(text, top_k=1)[0][0] == text  # a torch row is found by its onnx query


def test_an_unknown_backend_is_a_usage_error(tmp_path):
    result = main_here("--embedder", "tensorflow", "--run-dir", str(tmp_path / "run"))
    assert result.returncode == 2 and "invalid choice: 'tensorflow'" in result.stderr
