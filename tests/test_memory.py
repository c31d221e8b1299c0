import json

import numpy as np
import pytest

from memory.embedder import EmbedderError
from memory.vector_memory import VectorMemory


def remember(memory, *texts):
    for text in texts:
        memory.add(text, memory.embed(text))


def test_embeddings_are_384_dimensional_and_normalised(embedder):
    vectors = embedder.encode(["a red sofa", "a blue lamp"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_a_related_memory_ranks_above_unrelated_ones(embedder):
    memory = VectorMemory(embedder)
    remember(
        memory,
        "At position (2, 3, 0) facing north, I saw ['bed', 'wardrobe']. I decided to look_left.",
        "At position (7, 1, 0) facing east, I saw ['fridge', 'stove']. I decided to forward.",
        "At position (0, 5, 0) facing south, I saw ['rose_bush']. I decided to backward.",
        "At position (4, 4, 0) facing west, I saw []. I decided to look_right.",
    )
    results = memory.search("What do I know about the kitchen with what I see: refrigerator, oven?", top_k=3)
    assert len(results) == 3
    assert "fridge" in results[0][0]
    distances = [distance for _, distance in results]
    assert distances == sorted(distances)
    assert all(isinstance(text, str) and isinstance(d, float) for text, d in results)


def test_search_returns_at_most_what_is_stored(embedder):
    memory = VectorMemory(embedder)
    assert memory.search("anything") == []
    remember(memory, "only one memory")
    assert [text for text, _ in memory.search("anything", top_k=3)] == ["only one memory"]


def test_memories_are_private_to_each_agent(embedder):
    mine, yours = VectorMemory(embedder), VectorMemory(embedder)
    remember(mine, "I saw a piano in the hall")
    assert len(mine) == 1 and len(yours) == 0
    assert yours.search("piano") == []
    assert mine.index.ntotal == 1 and yours.index.ntotal == 0


def test_exact_search_finds_a_stored_text_at_distance_zero(embedder):
    memory = VectorMemory(embedder)
    remember(memory, "a green door", "a yellow car", "a cup of tea")
    text, distance = memory.search("a yellow car", top_k=1)[0]
    assert text == "a yellow car"
    assert distance < 1e-4


def test_a_memory_embedded_later_is_stored_at_once_and_searched_with_its_own_row(embedder, tmp_path):
    later, now = VectorMemory(embedder), VectorMemory(embedder)
    texts = ["At (1, 1, 0) I saw a lamp.", "At (2, 1, 0) I saw a desk.", "At (3, 1, 0) I saw a sofa."]
    later.add(texts[0], later.embed_later(texts[0]))
    later.add_many(texts[1:2], later.embed(texts[1]))  # a row ready at once keeps its place after the pending one
    later.add(texts[2], later.embed_later(texts[2]))
    assert later.texts == texts and len(later) == 3
    remember(now, *texts)
    for query in ("a sofa", "a desk", texts[0]):
        assert later.search(query, top_k=3) == now.search(query, top_k=3)
    later.add(texts[1], later.embed_later(texts[1]))  # a repeat needs no row
    later.save(tmp_path / "saved")
    assert VectorMemory.load(tmp_path / "saved", embedder).texts == texts + texts[1:2]


@pytest.mark.parametrize("searched_soon", [True, False])
def test_a_failed_later_embedding_is_reported_by_every_search_and_save_that_follows(
    embedder, monkeypatch, tmp_path, searched_soon
):
    memory = VectorMemory(embedder)
    remember(memory, "a lamp on the desk")

    def broken(texts):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(embedder._model, "encode", broken)
    text = f"a cup on the stove, failing {searched_soon}"
    memory.add(text, memory.embed_later(text, searched_soon))
    with pytest.raises(EmbedderError, match="out of memory"):
        memory.search("a cup")
    monkeypatch.undo()  # the model works again, but that row was never made: not skipped silently
    with pytest.raises(EmbedderError, match="out of memory"):
        memory.search("a cup")
    with pytest.raises(EmbedderError, match="out of memory"):
        memory.save(tmp_path / "saved")


def test_memories_embedded_in_a_batch_are_searched_and_saved_as_those_embedded_at_once(embedder, tmp_path):
    texts = [f"At ({x}, 2, 0) I saw a {thing}." for x, thing in enumerate(["lamp", "desk", "sofa", "desk", "bed"])]
    later, now = VectorMemory(embedder), VectorMemory(embedder)
    for text in texts:
        later.add(text, later.embed_later(text, searched_soon=False))
        now.add(text, now.embed_later(text, searched_soon=True))
    later.save(tmp_path / "later")  # waits for the held texts
    now.save(tmp_path / "now")
    saved = [json.loads((tmp_path / name / "meta.json").read_text()) for name in ("later", "now")]
    assert saved[0]["index_sha256"] == saved[1]["index_sha256"] and saved[0]["texts_sha256"] == saved[1]["texts_sha256"]
    assert later.search("a desk", 3) == now.search("a desk", 3)
