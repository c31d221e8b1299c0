"""A stand-in for the embedding model: deterministic unit vectors from a hash of each text, no model loaded.

For what needs an embedder but not its meaning: tests of the vector store, and
benchmarks of the built-in policies, which read no memories.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory.embedder import PendingRows


class HashEmbedder:
    """What a run and a VectorMemory ask of SentenceEmbedder, answered at once."""

    backend = "hash"

    def __init__(self, name: str = "fake/hash-embedder", dimension: int = 16) -> None:
        self.name, self.dimension = name, dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(self.dimension)
            rows.append(row / np.linalg.norm(row))
        return np.asarray(rows, dtype="float32").reshape(len(rows), self.dimension)

    def submit(self, texts: Sequence[str], deferred: bool = False) -> PendingRows:
        """The rows, at once (`deferred` or not: nothing is worth holding back here)."""
        texts = list(texts)
        return PendingRows(texts, dict(zip(texts, self.encode(texts))))

    def wait_loaded(self) -> None:
        """Nothing loads."""

    def wait_ready(self) -> None:
        """Always ready."""
