"""An agent's private memory: texts and their embeddings in a FAISS index.

The only module that imports FAISS.

The index is an HNSW graph over flat storage, one row per distinct text. Up to
`EXACT_UP_TO` rows the storage is searched exhaustively (exact, and fast
enough); past that an exact scan misses the 5 ms target (15-26 ms at 100,000
rows on these 2 cores), so the graph answers: at 100,000 real memories, about
1 ms with recall@3 0.98-0.99 against exact. Distances are squared L2 either way.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import uuid
from collections import deque
from pathlib import Path

import faiss
import numpy as np

from memory.embedder import PendingRows

# An exact scan costs about 0.15 ms per 1,000 rows, and 10,000 rows (15 MB)
# still fit in cache; twice that was 5x slower with other work on the cores.
EXACT_UP_TO = 10_000
# Graph settings, measured on 100,000 real memory embeddings: links per node;
# candidates kept while adding (40 gave recall@3 0.67, 200 gives 0.98-0.99) and
# while searching (256: about 1 ms; 128: 0.6 ms but recall 0.97).
HNSW_M = 32
EF_CONSTRUCTION = 200
EF_SEARCH = 256

META_FILE = "meta.json"
# What a load reads at most: meta.json is a few hundred bytes; the texts file of a million memories of a
# thousand characters is a gigabyte. (The index's bound follows from meta.json's count: `_largest`.)
MAX_META_BYTES = 1_000_000
MAX_TEXTS_BYTES = 2**30
FORMAT = 1
# What to do, for each kind of problem a load can meet.
NOT_SAVED_HERE = "check the path, or start without a saved memory"
DAMAGED = "the save is damaged: save it again, restore a copy, or start without a saved memory"
OTHER_MODEL = "run with the model it was saved with, or start without a saved memory"
CANNOT_WRITE = "free some disk space or choose another directory"


class MemoryFileError(ValueError):
    """A saved memory cannot be loaded or saved; the message is one line for the CLI."""


def _error(path, problem, remedy):
    # FAISS and json messages can span lines; the CLI prints one.
    return MemoryFileError(" ".join(f"{path}: {problem}; {remedy}".split()))


@contextlib.contextmanager
def _one_thread():
    """Run FAISS on the calling thread only.

    A single query gains nothing from an OpenMP team and pays for waking it
    (exact search over 10,000 rows: 1.1-1.6 ms on one thread, 11-28 ms on
    two, with other work on the cores). The setting is per thread, so agents searching at once do not
    disturb each other.
    """
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class VectorMemory:
    """One agent's private memories: texts and their embeddings.

    A text stored again (an agent scanning the same room) is counted, not
    indexed again: it has the same embedding, and thousands of identical rows
    break the graph (recall@3 fell to 0.6-0.75 with 100,000 memories of 2,000
    texts). Search still returns it once per time it was stored, as an exact
    search over every memory would.
    """

    def __init__(self, embedder, exact_up_to=EXACT_UP_TO):
        self.embedder = embedder
        self.exact_up_to = exact_up_to
        self.index = faiss.IndexHNSWFlat(embedder.dimension, HNSW_M)
        self.index.hnsw.efConstruction = EF_CONSTRUCTION
        self.index.hnsw.efSearch = EF_SEARCH
        self.texts: list[str] = []  # every memory, in order
        self._rows: dict[str, int] = {}  # distinct text -> its row in the index
        self._row_texts: list[str] = []
        self._copies: list[int] = []  # per row: how many times it was stored
        self._unindexed: deque[PendingRows] = deque()  # rows still being encoded (or held back), in row order

    def __len__(self):
        return len(self.texts)

    def embed(self, text) -> np.ndarray:
        return self.embedder.encode([text])

    def embed_later(self, text, searched_soon=True) -> PendingRows:
        """Start embedding `text`; `add` takes what this returns before the encoding is done.
        `searched_soon=False`: nothing searches this memory soon, so the text is deferred: encoded when the
        service is free or in a batch with others (memory/embedder.py), at the latest when searched or saved."""
        return self.embedder.submit([text], deferred=not searched_soon)

    def add(self, text, vector):
        """Store one memory; `vector` is `embed(text)`, or `embed_later(text)`, whose row the index
        waits for only when it is next read: a search or a save."""
        if not isinstance(vector, PendingRows):
            self.add_many([text], vector)
            return
        if self._count([text]):
            self._unindexed.append(vector)
        self.texts.append(text)

    def _index_pending(self):
        """Add the rows of earlier `embed_later` calls, in order; those not yet encoded are waited for."""
        while self._unindexed:
            self.index.add(np.ascontiguousarray(self._unindexed[0].result(), dtype="float32"))
            self._unindexed.popleft()  # only once added: a failed encoding stays to be reported again

    def add_many(self, texts, vectors):
        """Store memories; row i of `vectors` is the embedding of `texts[i]`."""
        self._index_pending()  # rows are numbered in order of arrival
        texts = list(texts)
        vectors = np.ascontiguousarray(vectors, dtype="float32").reshape(-1, self.index.d)
        if len(vectors) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        new = self._count(texts)
        if new:
            self.index.add(vectors[new])
        self.texts.extend(texts)  # the same list object: the agent's dict holds it

    def _count(self, texts) -> list[int]:
        """Count each text in; the positions of those never seen before, which need a row."""
        new = []
        for i, text in enumerate(texts):
            row = self._rows.get(text)
            if row is None:
                row = self._rows[text] = len(self._row_texts)
                self._row_texts.append(text)
                self._copies.append(0)
                new.append(i)
            self._copies[row] += 1
        return new

    def search(self, query, top_k=3) -> list[tuple[str, float]]:
        """The closest memories to a text as (text, squared L2 distance), nearest first."""
        if not self.texts:
            return []  # no need to embed
        query = self.embedder.submit([query])  # encoded while the last memories' rows are awaited
        self._index_pending()
        return self.search_vector(query.result(), top_k)

    def search_vector(self, vector, top_k=3) -> list[tuple[str, float]]:
        """The closest memories to an embedding as (text, squared L2 distance), nearest first."""
        self._index_pending()
        rows = len(self._row_texts)
        if top_k <= 0 or rows == 0:
            return []
        query = np.ascontiguousarray(vector, dtype="float32").reshape(1, -1)
        index = self.index.storage if rows <= self.exact_up_to else self.index
        with _one_thread():
            distances, found = index.search(query, min(top_k, rows))
        results = []
        for distance, row in zip(distances[0], found[0]):
            if row >= 0:
                results += [(self._row_texts[row], float(distance))] * min(self._copies[row], top_k)
        return results[:top_k]

    def save(self, directory):
        """Write the memory to `directory` (created if needed); MemoryFileError if it cannot.

        The index and texts go to files with fresh names, then `meta.json`,
        which names them, is replaced atomically. A crash therefore leaves the
        previous save or this one, never a mix. Older files are removed after.
        """
        self._index_pending()
        directory = Path(directory)
        tag = uuid.uuid4().hex[:12]
        index_name, texts_name = f"index-{tag}.faiss", f"texts-{tag}.jsonl"
        index_data = faiss.serialize_index(self.index).tobytes()  # what faiss.write_index writes
        # json.dumps escapes newlines and everything non-ASCII: one text per line.
        texts_data = "".join(json.dumps(text) + "\n" for text in self.texts).encode("ascii")
        meta = {
            "format": FORMAT,
            "model": self.embedder.name,
            # Either backend may load it: their rows differ by at most 2.2e-7 (docs/options.md, --embedder).
            "backend": self.embedder.backend,
            "dimension": int(self.index.d),
            "count": len(self.texts),
            "index_file": index_name,
            "index_sha256": hashlib.sha256(index_data).hexdigest(),
            "texts_file": texts_name,
            "texts_sha256": hashlib.sha256(texts_data).hexdigest(),
        }
        temporary = directory / f"{META_FILE}.{tag}.tmp"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _write(directory / index_name, index_data)
            _write(directory / texts_name, texts_data)
            _write(temporary, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
            os.replace(temporary, directory / META_FILE)
        except OSError as exc:
            # A full disk: leave the previous save as it was, and none of this one's pieces.
            for name in (index_name, texts_name, temporary.name):
                with contextlib.suppress(OSError):  # a path that is no directory at all holds none of them
                    (directory / name).unlink(missing_ok=True)
            raise _error(directory, f"cannot save the memory here ({exc.strerror or exc})", CANNOT_WRITE) from exc
        try:
            _fsync_directory(directory)
        except OSError as exc:
            raise _error(directory, f"cannot save the memory here ({exc.strerror or exc})", CANNOT_WRITE) from exc
        # Earlier saves, and whatever an interrupted save left behind.
        for pattern in ("index-*.faiss", "texts-*.jsonl", f"{META_FILE}.*.tmp"):
            for old in directory.glob(pattern):
                if old.name not in (index_name, texts_name):
                    old.unlink(missing_ok=True)

    @classmethod
    def load(cls, directory, embedder, exact_up_to=EXACT_UP_TO):
        """The memory saved in `directory`, checked against `embedder`; else MemoryFileError."""
        directory = Path(directory)
        if not directory.is_dir():
            raise _error(directory, "no such directory", NOT_SAVED_HERE)
        meta_path = directory / META_FILE
        meta = _read_meta(meta_path)
        if meta["model"] != embedder.name:
            raise _error(
                meta_path,
                f"saved with embedding model {meta['model']!r} but this run uses {embedder.name!r}",
                OTHER_MODEL,
            )
        if meta["dimension"] != embedder.dimension:
            raise _error(
                meta_path,
                f"saved with {meta['dimension']}-dimensional embeddings but {embedder.name!r} "
                f"gives {embedder.dimension}",
                OTHER_MODEL,
            )
        index_path, index_data = _checked_file(directory, meta, "index")
        texts_path, texts_data = _checked_file(directory, meta, "texts")
        try:
            index = faiss.deserialize_index(np.frombuffer(index_data, dtype="uint8"))
        except RuntimeError:
            raise _error(index_path, "cannot be read as a FAISS index", DAMAGED) from None
        if not isinstance(index, faiss.IndexHNSWFlat) or index.metric_type != faiss.METRIC_L2:
            raise _error(index_path, "is not an L2 HNSW index as this version saves", DAMAGED)
        if index.d != embedder.dimension:
            raise _error(index_path, f"holds {index.d}-dimensional vectors, not {embedder.dimension}", DAMAGED)
        texts = _parse_texts(texts_path, texts_data)
        memory = cls(embedder, exact_up_to)
        # Rows were added in order of first appearance, so counting again rebuilds them.
        memory._count(texts)
        if not meta["count"] == len(texts) or len(memory._row_texts) != index.ntotal:
            raise _error(
                directory,
                f"{META_FILE} counts {meta['count']} memories; the texts file holds {len(texts)} "
                f"({len(memory._row_texts)} distinct) but the index {index.ntotal}",
                DAMAGED,
            )
        index.hnsw.efSearch = EF_SEARCH
        memory.index = index
        memory.texts.extend(texts)
        return memory


_META_FIELDS = {
    "format": int,
    "model": str,
    "dimension": int,
    "count": int,
    "index_file": str,
    "index_sha256": str,
    "texts_file": str,
    "texts_sha256": str,
}


def _read_meta(path):
    try:
        meta = json.loads(_read_saved(path, MAX_META_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise _error(path, "missing, so there is no complete saved memory here", NOT_SAVED_HERE) from None
    except OSError as exc:
        raise _error(path, f"unreadable ({exc.strerror or exc})", DAMAGED) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _error(path, f"unreadable ({exc})", DAMAGED) from None
    bad = [
        field for field, kind in _META_FIELDS.items() if not isinstance(meta, dict) or type(meta.get(field)) is not kind
    ]
    if bad:
        raise _error(path, f"not a memory description: missing or wrong {', '.join(bad)}", DAMAGED)
    if meta["format"] != FORMAT:
        raise _error(
            path,
            f"format {meta['format']}, but this version reads format {FORMAT}",
            "load it with the version that saved it, or start without a saved memory",
        )
    return meta


def _checked_file(directory, meta, kind):
    """The path and contents of the data file `meta` names, checked against its checksum."""
    name = meta[f"{kind}_file"]
    if Path(name).name != name or name in ("", ".", ".."):
        raise _error(directory / META_FILE, f"names {name!r} as its {kind} file, which is not a file name", DAMAGED)
    path = directory / name
    try:
        data = _read_saved(path, _largest(meta, kind))
    except FileNotFoundError:
        raise _error(path, f"missing ({META_FILE} names it as the {kind} file)", DAMAGED) from None
    except OSError as exc:
        raise _error(path, f"unreadable ({exc.strerror or exc})", DAMAGED) from None
    # Checked before parsing: a truncated or altered file never reaches FAISS's reader.
    if hashlib.sha256(data).hexdigest() != meta[f"{kind}_sha256"]:
        raise _error(path, f"truncated or changed since it was saved (checksum differs from {META_FILE})", DAMAGED)
    return path, data


def _largest(meta, kind):
    """The most bytes a save of `meta`'s count of memories can have in its `kind` file: the index holds at
    most a row per memory, each its vector and its links in the graph (about 300 bytes at HNSW_M 32)."""
    if kind == "texts":
        return MAX_TEXTS_BYTES
    return 65_536 + max(meta["count"], 0) * (4 * meta["dimension"] + 1024)


def _read_saved(path, limit):
    """The bytes of the regular file at `path`, at most `limit` of them; OSError otherwise.

    Opened without blocking and read no further than the bound: a saved file that is a link to /dev/zero,
    or a FIFO, is refused rather than read without end or waited on. (memory/ imports nothing of
    perception/, whose perception/files.py reads the same way.)
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than the {limit:,} bytes a save of this size can have")
    return data


def _parse_texts(path, data):
    texts = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            text = json.loads(line)
        except ValueError:  # bad JSON or bad UTF-8
            text = None
        if not isinstance(text, str):
            raise _error(path, f"line {number} is not a JSON string", DAMAGED)
        texts.append(text)
    return texts


def _write(path, data):
    """Write a new file and flush it to disk, so the rename that follows cannot outrun its data.

    Created exclusively and never through a link: a file planted under its name is not written through.
    """
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _fsync_directory(path):
    """Flush a rename to disk (POSIX; Windows cannot open a directory)."""
    if os.name == "posix":
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
