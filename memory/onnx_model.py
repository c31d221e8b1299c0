"""all-MiniLM-L6-v2 on ONNX Runtime: the only module that imports onnxruntime and tokenizers.

Loads an export made by memory/onnx_export.py in about half a second, with no
torch import. Pooling and normalisation are done here, as the model's
modules.json says: the mean over real tokens, then L2 normalisation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

BACKEND = "onnx"


class OnnxModel:
    backend = BACKEND

    def __init__(self, folder):
        folder = Path(folder)
        info = json.loads((folder / "export.json").read_text())
        self.folder = folder
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(info["max_seq_length"])
        self.tokenizer.enable_padding()  # to the batch's longest text, not tokenizer.json's fixed 128
        options = onnxruntime.SessionOptions()
        # One thread per pass, as with torch: passes run side by side, one core each, and a
        # row is bit-identical whatever else is in its batch (tests/test_embedding_service.py).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # its warnings about unused initializers would reach the console
        self.session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def token_lengths(self, texts) -> list[int]:
        return [sum(encoding.attention_mask) for encoding in self.tokenizer.encode_batch_fast(list(texts))]

    def encode(self, texts) -> np.ndarray:
        """L2-normalised float32 rows."""
        encodings = self.tokenizer.encode_batch_fast(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype("float32")
