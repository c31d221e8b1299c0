"""int8 all-MiniLM-L6-v2 against fp32: does retrieval hold, and how much faster are memory texts embedded?

`python bench/int8_embedder.py` writes bench/int8_embedder.json. The int8 model is made here, from the app's fp32
ONNX export (memory/onnx_export.py), by ONNX Runtime's dynamic quantisation with the settings
sentence-transformers' `export_dynamic_quantized_onnx_model` gives each of its configurations (through
optimum's AutoQuantizationConfig, dynamic: int8 weights per channel, symmetric; uint8 activations, their
scale computed per tensor at run time; every operator ONNX Runtime quantises dynamically): optimum is not
installed here, so its settings are passed to ONNX Runtime directly. Nothing is downloaded.

For each configuration:
- retrieval: on the fixed set (bench/retrieval_set.py), the share of queries whose nearest three memories are
  fp32's; int8 would be the default only at 0.9 or more;
- speed: the set's distinct memory texts embedded as the app's service embeds them (passes of one token
  length, up to 64 texts, one pass per core at once), fp32 and int8 in turn, the median of `--rounds`;
- the cosine between a memory text's fp32 and int8 rows;
- whether a row depends on its batch: the largest difference between a text embedded alone and in a batch
  (fp32's rows do not change, and the app's traces rely on it; int8's activations are scaled per batch).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: E402

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from bench.retrieval_set import Row, agreement, load_set  # noqa: E402
from memory import onnx_export  # noqa: E402
from memory.onnx_model import OnnxModel  # noqa: E402

PASS_TEXTS = 64
WORKERS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
HOLDS = 0.9  # the share of queries whose nearest three must be fp32's for int8 to be the default
# sentence-transformers' configurations (optimum's AutoQuantizationConfig, dynamic): "avx2" quantises weights
# to uint8, "arm64", "avx512" and "avx512_vnni" to int8; all per channel, weights symmetric.
CONFIGURATIONS = {"avx2": QuantType.QUInt8, "avx512_vnni": QuantType.QInt8}


def quantised(fp32: Path, weights: QuantType, folder: Path) -> Path:
    """An int8 copy of the export in `fp32`, in `folder`, loadable as the export is."""
    folder.mkdir()
    for name in ("tokenizer.json", "export.json"):
        shutil.copyfile(fp32 / name, folder / name)
    quantize_dynamic(
        fp32 / "model.onnx",
        folder / "model.onnx",
        per_channel=True,
        reduce_range=False,
        weight_type=weights,
        # As optimum passes them: activations asymmetric, and a MatMul of two activations quantised too.
        extra_options={"WeightSymmetric": True, "ActivationSymmetric": False, "MatMulConstBOnly": False},
    )
    return folder


def service_passes(model: OnnxModel, texts: list[str]) -> list[list[str]]:
    """The texts in passes as the app's service makes them: one token length each, up to PASS_TEXTS."""
    by_length: dict[int, list[str]] = {}
    for text, length in zip(texts, model.token_lengths(texts)):
        by_length.setdefault(length, []).append(text)
    return [same[i : i + PASS_TEXTS] for same in by_length.values() for i in range(0, len(same), PASS_TEXTS)]


def seconds_to_embed(model: OnnxModel, passes: list[list[str]], pool: ThreadPoolExecutor) -> float:
    started = time.perf_counter()
    list(pool.map(model.encode, passes))
    return time.perf_counter() - started


def alone(model: OnnxModel, texts: list[str]) -> np.ndarray:
    """Each text's row encoded on its own: what the app's rows are, whatever batch they were in."""
    return np.vstack([model.encode([text]) for text in texts])


def batch_effect(model: OnnxModel, texts: list[str]) -> float:
    """The largest difference between a text's row encoded alone and in a batch with others."""
    sample = texts[:32]
    return round(float(np.abs(model.encode(sample) - alone(model, sample)).max()), 6)


def cosine(fp32: OnnxModel, int8: OnnxModel, texts: list[str]) -> dict[str, float]:
    """The cosine between each text's fp32 and int8 rows (both L2-normalised): the mean and the least."""
    cosines = (alone(fp32, texts) * alone(int8, texts)).sum(axis=1)
    return {"mean": round(float(cosines.mean()), 4), "least": round(float(cosines.min()), 4)}


def speeds(models: dict[str, OnnxModel], texts: list[str], rounds: int) -> dict[str, float]:
    """Milliseconds per memory text for each model, the median of `rounds`, the models taking turns."""
    times: dict[str, list[float]] = {name: [] for name in models}
    with ThreadPoolExecutor(WORKERS) as pool:
        for model in models.values():
            list(pool.map(model.encode, service_passes(model, texts)[:WORKERS]))  # warm
        for _ in range(rounds):
            for name, model in models.items():
                times[name].append(seconds_to_embed(model, service_passes(model, texts), pool))
    return {name: round(statistics.median(spent) / len(texts) * 1000, 2) for name, spent in times.items()}


def measure(rows: list[Row], rounds: int, workdir: Path) -> dict:
    fp32_folder = onnx_export.export(onnx_export.default_cache_dir())
    fp32 = OnnxModel(fp32_folder)
    texts = sorted({text for row in rows for text in row.memories})
    figures: dict = {"fp32": {"agreement": agreement(lambda t: alone(fp32, t), rows)}}
    figures["fp32"]["batch_effect"] = batch_effect(fp32, texts)
    for name, weights in CONFIGURATIONS.items():
        int8 = OnnxModel(quantised(fp32_folder, weights, workdir / name))
        ms = speeds({"fp32": fp32, "int8": int8}, texts, rounds)
        figures[name] = {
            "agreement": agreement(lambda t, model=int8: alone(model, t), rows),
            "cosine_to_fp32": cosine(fp32, int8, texts),
            "batch_effect": batch_effect(int8, texts),
            "fp32_ms_per_text": ms["fp32"],
            "int8_ms_per_text": ms["int8"],
            "int8_speedup": round(ms["fp32"] / ms["int8"], 2),
        }
        print(f"{name}: {figures[name]}", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "int8_embedder.json")
    args = parser.parse_args()
    rows = load_set()
    load_before = round(os.getloadavg()[0], 1)
    with tempfile.TemporaryDirectory() as workdir:
        figures = measure(rows, args.rounds, Path(workdir))
    write_figures(
        args.out,
        {
            "command": command_line("int8_embedder.py"),
            # The machine is shared: its load says how far the milliseconds may be from an idle machine's.
            "load_average_before_after": [load_before, round(os.getloadavg()[0], 1)],
            "cores": WORKERS,
            "memory_texts": len({text for row in rows for text in row.memories}),
            "holds_at": HOLDS,
            **figures,
            "int8_holds": {name: figures[name]["agreement"]["same_three"] >= HOLDS for name in CONFIGURATIONS},
        },
    )


if __name__ == "__main__":
    main()
