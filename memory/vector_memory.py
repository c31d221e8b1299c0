"""An agent's private memory: texts and their embeddings in a FAISS index.

The only module that imports FAISS.
"""

from __future__ import annotations

import faiss
import numpy as np


class VectorMemory:
    """Exact L2 search over one agent's memories (spec section 7)."""

    def __init__(self, embedder):
        self.embedder = embedder
        self.index = faiss.IndexFlatL2(embedder.dimension)
        self.texts: list[str] = []

    def __len__(self):
        return len(self.texts)

    def embed(self, text) -> np.ndarray:
        return self.embedder.encode([text])

    def add(self, text, vector):
        """Store one memory; `vector` is `embed(text)`."""
        self.index.add(np.asarray(vector, dtype="float32").reshape(1, -1))
        self.texts.append(text)

    def search(self, query, top_k=3) -> list[tuple[str, float]]:
        """The closest memories as (text, squared L2 distance), nearest first."""
        if not self.texts:
            return []
        distances, ids = self.index.search(self.embed(query), min(top_k, len(self.texts)))
        return [(self.texts[i], float(d)) for d, i in zip(distances[0], ids[0]) if i >= 0]
