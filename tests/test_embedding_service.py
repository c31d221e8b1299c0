"""The shared embedding service: the rows of single calls, every request answered, fewer passes."""

import inspect
import random
import threading
import time

import numpy as np
import pytest

from memory.embedder import MAX_PASS_TOKENS, EmbedderError, SentenceEmbedder, TextCache
from memory.vector_memory import VectorMemory

TIMEOUT = 60
OBJECTS = ["bed", "wardrobe", "fridge", "stove", "rose bush", "piano", "desk", "lamp", "sofa", "chair", "oven"]


@pytest.fixture(scope="module")
def naive():
    """The baseline: every call encodes its own texts, nothing shared, nothing cached."""
    model = SentenceEmbedder(batching=False)
    model.wait_ready()
    return model


@pytest.fixture
def passes(embedder, monkeypatch):
    """The texts of every forward pass the service makes."""
    calls = []
    real = embedder._model.encode

    def counting(texts, *args, **kwargs):
        calls.append(list(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(embedder._model, "encode", counting)
    return calls


def sentences(tag, count, seed):
    """Distinct memory-like texts of varied token lengths, new to the service's cache."""
    rng = random.Random(seed)
    return [
        f"{tag} {i}: I saw {rng.sample(OBJECTS, rng.randint(0, 4))} and chose {rng.choice(['forward', 'look_left'])}."
        for i in range(count)
    ]


def same_length(embedder, tag, count):
    """Distinct texts of one token length, at least 16 tokens, so they fit in one pass."""
    pairs = [("lamp", "sofa"), ("lamp", "bed"), ("desk", "sofa"), ("desk", "bed")]
    texts = [f"{tag} {i}: I saw a {a} near the {b} in the room north of the hall" for i in range(100) for a, b in pairs]
    lengths = embedder._model.token_lengths(texts)
    common = max(set(lengths), key=lengths.count)
    chosen = [t for t, n in zip(texts, lengths) if n == common][:count]
    assert len(chosen) == count and common >= 16
    return chosen


def flat(passes):
    return [text for texts in passes for text in texts]


def singles(naive, texts):
    return {t: naive.encode([t])[0] for t in texts}


def in_threads(work, count):
    """Run work(i) on `count` threads released together; their results, or their exceptions."""
    start = threading.Barrier(count)
    results = [None] * count

    def run(i):
        start.wait()
        try:
            results[i] = work(i)
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + TIMEOUT
    for thread in threads:
        thread.join(max(0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "a caller is still waiting"
    return results


def soon(work):
    """work() on another thread, so that a lost request fails the test instead of hanging it."""
    [result] = in_threads(lambda i: work(), 1)
    if isinstance(result, Exception):
        raise result
    return result


def test_batched_rows_are_bit_identical_to_single_calls(embedder, naive):
    # Measured on this CPU: one padded pass differs from single calls by up to 2.2e-7;
    # passes of one token length (texts under 16 tokens alone) give the same bits,
    # so no tolerance here.
    texts = sentences("a", 40, seed=1) + ["x", "", "word " * 300, "a " * 400]  # the last two are truncated
    texts.append(texts[5])
    rows = soon(lambda: embedder.encode(texts))
    assert rows.dtype == np.float32 and rows.shape == (len(texts), 384)
    reference = singles(naive, texts)
    for row, text in zip(rows, texts):
        assert np.array_equal(row, reference[text]), text
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)


def test_concurrent_callers_each_get_their_own_rows(embedder, naive):
    texts = {i: sentences(f"b{i}", 20, seed=i) for i in range(16)}
    reference = singles(naive, [t for mine in texts.values() for t in mine])

    def work(i):
        # Four calls of five texts each, so the gathers mix parts of different requests.
        return [embedder.encode(texts[i][k : k + 5]) for k in range(0, 20, 5)]

    for i, answers in enumerate(in_threads(work, 16)):
        assert not isinstance(answers, Exception), answers
        rows = np.vstack(answers)
        assert rows.shape == (20, 384)
        for row, text in zip(rows, texts[i]):
            assert np.array_equal(row, reference[text]), text


def test_requests_arriving_together_share_forward_passes(embedder, naive, passes):
    texts = same_length(embedder, "c", 16)
    results = in_threads(lambda i: embedder.encode([texts[i]]), 16)
    assert sorted(flat(passes)) == sorted(texts)
    assert len(passes) < 16
    reference = singles(naive, texts)
    assert all(np.array_equal(rows[0], reference[text]) for rows, text in zip(results, texts))


def test_a_large_batch_is_encoded_in_passes_of_bounded_size(embedder, naive, passes):
    # ONNX Runtime's arena keeps what its largest pass needed for the rest of the run: a team's batch
    # of hundreds of memory texts in one pass held hundreds of megabytes.
    texts = same_length(embedder, "big", 300)
    length = embedder._model.token_lengths(texts[:1])[0]
    rows = soon(lambda: embedder.encode(texts))
    assert sorted(flat(passes)) == sorted(texts)
    assert max(len(texts) for texts in passes) * length <= MAX_PASS_TOKENS
    reference = singles(naive, texts)
    assert all(np.array_equal(row, reference[text]) for row, text in zip(rows, texts))


def test_an_idle_worker_encodes_a_text_at_once_while_another_pass_is_under_way(two_workers, naive, monkeypatch):
    # Under lock-step the first agents' model calls go out while the others' queries are still being encoded:
    # a caller waits for no one to be gathered with, nor for a pass that does not hold its text (a search's
    # query, for the memory text of another agent that came just before it).
    stalled = Stalled(two_workers, monkeypatch)
    [text] = sentences("at once", 1, seed=10)
    row = soon(lambda: two_workers.encode([text]))  # a service that waited for the stalled pass timed out here
    assert not stalled.blocker.request.done.is_set()
    stalled.resume()
    assert np.array_equal(row[0], naive.encode([text])[0])


def test_texts_queued_while_every_worker_is_busy_share_the_next_passes(two_workers, naive, monkeypatch):
    stalled = [Stalled(two_workers, monkeypatch, str(i)) for i in range(two_workers.workers)]
    texts = same_length(two_workers, "queued", 8)
    pending = [two_workers.submit([text]) for text in texts]
    assert all(len(each.passes) == 1 for each in stalled)  # queued: no pass has taken them yet
    for each in stalled:
        each.resume()
    rows = soon(lambda: [each.result()[0] for each in pending])
    passes = stalled[-1].passes[1:]
    assert sorted(flat(passes)) == sorted(texts) and len(passes) <= two_workers.workers  # shared among the workers
    reference = singles(naive, texts)
    assert all(np.array_equal(row, reference[text]) for row, text in zip(rows, texts))


def test_the_shortest_texts_queued_are_encoded_first(two_workers, monkeypatch):
    # A search's query goes before the memory texts queued with it: its caller waits for the fewest tokens.
    stalled = [Stalled(two_workers, monkeypatch, str(i)) for i in range(two_workers.workers)]
    memories = same_length(two_workers, "later", 3)
    query = "q: where did I see the piano?"
    pending = [two_workers.submit([text]) for text in [*memories, query]]
    for each in stalled:
        each.resume()
    soon(lambda: [each.result() for each in pending])
    passes = stalled[-1].passes[1:]
    assert passes[0] == [query] and sorted(flat(passes[1:])) == sorted(memories)


def test_a_repeated_text_comes_from_the_cache_as_a_copy(embedder, passes):
    def encode(texts):
        return soon(lambda: embedder.encode(texts))

    first = encode(["d: a lamp on the piano"])
    assert len(passes) == 1
    again = encode(["d: a lamp on the piano"])
    assert len(passes) == 1
    assert np.array_equal(again, first)
    again[:] = 0  # the caller's copy, not the cache's vector
    assert np.array_equal(encode(["d: a lamp on the piano"]), first)
    # Only the new text of a call goes to the model.
    both = encode(["d: a lamp on the piano", "d: a cup on the desk"])
    assert passes[1:] == [["d: a cup on the desk"]]
    assert np.array_equal(both[0], first[0])


def test_the_cache_keeps_the_most_recently_used_texts():
    cache = TextCache(2)
    cache.put({"a": 1, "b": 2})
    cache.get(["a"])
    cache.put({"c": 3})
    assert cache.get(["a", "b", "c"]) == {"a": 1, "c": 3}
    assert inspect.signature(SentenceEmbedder).parameters["cache_size"].default == 10_000


def test_a_model_error_reaches_every_waiting_caller_and_the_service_recovers(embedder, naive, monkeypatch):
    real = embedder._model.encode
    failed = []

    def broken(texts, *args, **kwargs):
        failed.append(list(texts))
        raise RuntimeError("out of memory")

    monkeypatch.setattr(embedder._model, "encode", broken)
    texts = same_length(embedder, "e", 8)
    results = in_threads(lambda i: embedder.encode([texts[i]]), 8)
    assert sorted(flat(failed)) == sorted(texts)  # each text tried once
    for result in results:
        assert isinstance(result, EmbedderError) and "out of memory" in str(result)
        assert isinstance(result.__cause__, RuntimeError)

    monkeypatch.setattr(embedder._model, "encode", real)
    rows = soon(lambda: embedder.encode(texts))  # nothing of the failed pass was cached
    reference = singles(naive, texts)
    assert all(np.array_equal(row, reference[t]) for row, t in zip(rows, texts))


def test_retrieval_is_the_same_as_with_single_calls(embedder, naive):
    texts = sentences("r", 12, seed=3)
    shared, alone = VectorMemory(embedder), VectorMemory(naive)

    def remember_and_search(memory):
        for text in texts:
            memory.add(text, memory.embed(text))
        queries = ("Where did I see the fridge and the oven?", texts[4], "a sofa")
        return [memory.search(query, top_k=5) for query in queries]

    assert soon(lambda: remember_and_search(shared)) == remember_and_search(alone)


def test_naive_mode_encodes_every_call_itself(naive, monkeypatch):
    calls = []
    real = naive._model.encode
    monkeypatch.setattr(naive._model, "encode", lambda texts, *a, **k: calls.append(texts) or real(texts, *a, **k))
    texts = sentences("n", 8, seed=4)
    results = in_threads(lambda i: [naive.encode([texts[i]]) for _ in range(2)][1], 8)
    assert len(calls) == 16 and all(len(c) == 1 for c in calls)  # no gathering, no cache
    reference = singles(naive, texts)
    for result, text in zip(results, texts):
        assert np.array_equal(result[0], reference[text])


def test_empty_and_wrong_inputs(embedder, naive):
    for model in (embedder, naive):
        assert model.encode([]).shape == (0, 384)
        with pytest.raises(TypeError):
            model.encode(["fine", None])


HELD = 6


@pytest.fixture(scope="module")
def holding():
    """A service that holds back up to HELD deferred texts."""
    model = SentenceEmbedder(deferred_batch=HELD)
    model.wait_ready()
    return model


@pytest.fixture(scope="module")
def two_workers():
    """A service with two workers, whatever the machine's cores: one can encode while the other is busy."""
    model = SentenceEmbedder(workers=2)
    model.wait_ready()
    return model


class Stalled:
    """A worker busy with a text whose pass waits for `go_on`; `passes` are the service's passes from then on.
    Stalling a second worker wraps the first one's stall: each waits for its own text only."""

    def __init__(self, service, monkeypatch, tag=""):
        self.passes, self.go_on, started = [], threading.Event(), threading.Event()
        real = service._model.encode
        [busy] = sentences(f"busy {tag} {id(self)}", 1, seed=9)

        def encode(texts):
            self.passes.append(list(texts))
            if busy in texts:
                started.set()
                self.go_on.wait(TIMEOUT)
            return real(texts)

        monkeypatch.setattr(service._model, "encode", encode)
        self.blocker = service.submit([busy])
        assert started.wait(TIMEOUT), "the service never took the first text"

    def resume(self):
        self.go_on.set()
        soon(self.blocker.result)


def test_deferred_texts_wait_while_the_service_is_busy_then_go_together(holding, naive, monkeypatch):
    stalled = Stalled(holding, monkeypatch)
    texts = same_length(holding, "h", HELD - 1)
    held = [holding.submit([text], deferred=True) for text in texts]
    assert len(stalled.passes) == 1  # held: no pass has taken them
    stalled.resume()
    rows = soon(lambda: [pending.result()[0] for pending in held])
    passes = stalled.passes[1:]
    assert sorted(flat(passes)) == sorted(texts) and len(passes) <= holding.workers  # one gathering, in one go
    reference = singles(naive, texts)
    assert all(np.array_equal(row, reference[text]) for row, text in zip(rows, texts))


def test_an_idle_service_encodes_a_deferred_text_before_anyone_asks(holding, naive):
    [text] = sentences("idle", 1, seed=8)
    pending = holding.submit([text], deferred=True)
    assert pending.request.done.wait(TIMEOUT)  # nobody asked for it
    assert np.array_equal(pending.result()[0], singles(naive, [text])[text])


def test_a_caller_that_defers_faster_than_texts_are_encoded_waits_for_the_batch_before(holding, monkeypatch):
    # At most a batch being encoded and a batch held: a run's memory and its last save's wait stay bounded.
    stalled = [Stalled(holding, monkeypatch, str(i)) for i in range(holding.workers)]
    first = [holding.submit([text], deferred=True) for text in sentences("p", HELD, seed=6)]  # a full batch: given
    order = []
    later = threading.Thread(
        target=lambda: order.append(holding.submit(sentences("q", 1, seed=7), deferred=True) and "submitted")
    )
    later.start()
    later.join(0.2)  # it waits for the batch before, which cannot be encoded yet
    order.append("encoding")
    for each in stalled:
        each.resume()
    later.join(TIMEOUT)
    assert all(soon(pending.result).shape == (1, 384) for pending in first)
    assert order == ["encoding", "submitted"]
