"""Large memories: exact search by vector, the graph past the exact limit, save and load."""

import hashlib
import json
import os

import numpy as np
import pytest

from explorer.testing.hash_embedder import HashEmbedder as FakeEmbedder
from memory import vector_memory
from memory.vector_memory import MemoryFileError, VectorMemory


def unit_rows(count, dimension, seed=0):
    rows = np.random.default_rng(seed).standard_normal((count, dimension)).astype("float32")
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def filled(embedder, count=50, **options):
    memory = VectorMemory(embedder, **options)
    texts = [f"memory {i}: I saw object {i % 7} at ({i}, {i * 3 % 11}, 0)" for i in range(count)]
    memory.add_many(texts, embedder.encode(texts))
    return memory


QUERIES = ["object 3", "I saw object 5 at (4, 1, 0)", "nothing like it", "memory 42"]


def results(memory):
    return [memory.search(query, top_k=3) for query in QUERIES]


def load_error(directory, embedder):
    with pytest.raises(MemoryFileError) as caught:
        VectorMemory.load(directory, embedder)
    message = str(caught.value)
    assert "\n" not in message
    return message


def meta_of(directory):
    return json.loads((directory / "meta.json").read_text())


def rewrite(directory, kind, data):
    """Replace a data file and update its checksum, as a careless hand would."""
    meta = meta_of(directory)
    (directory / meta[f"{kind}_file"]).write_bytes(data)
    meta[f"{kind}_sha256"] = hashlib.sha256(data).hexdigest()
    (directory / "meta.json").write_text(json.dumps(meta))


# search_vector against brute force


def test_search_vector_equals_exact_brute_force():
    vectors = unit_rows(5_000, 384, seed=1)
    memory = VectorMemory(FakeEmbedder(dimension=384))
    memory.add_many([f"m{i}" for i in range(len(vectors))], vectors)
    # Searched this narrowly the graph would miss many; below the exact limit it is not used.
    memory.index.hnsw.efSearch = 1
    for query in unit_rows(20, 384, seed=2):
        squared = ((vectors - query) ** 2).sum(axis=1)
        nearest = np.argsort(squared)[:5]
        found = memory.search_vector(query, top_k=5)
        assert [text for text, _ in found] == [f"m{i}" for i in nearest]
        assert np.allclose([d for _, d in found], squared[nearest], atol=1e-4)


def test_repeated_texts_get_one_row_and_are_returned_as_often_as_stored():
    vectors = unit_rows(3_000, 64, seed=8)
    picks = np.random.default_rng(9).integers(0, 400, 3_000)  # 3,000 memories, at most 400 texts
    memory = VectorMemory(FakeEmbedder(dimension=64))
    for start in range(0, 3_000, 700):  # in several batches, as a run adds them
        chunk = picks[start : start + 700]
        memory.add_many([f"t{i}" for i in chunk], vectors[chunk])
    assert len(memory) == 3_000 and memory.index.ntotal == len(set(picks.tolist()))
    stored = vectors[picks]
    for query in unit_rows(20, 64, seed=10):
        squared = ((stored - query) ** 2).sum(axis=1)
        nearest = np.argsort(squared, kind="stable")[:6]
        found = memory.search_vector(query, top_k=6)
        assert [text for text, _ in found] == [f"t{picks[i]}" for i in nearest]
        assert np.allclose([d for _, d in found], squared[nearest], atol=1e-4)


def test_a_memory_stored_twice_comes_back_twice():
    embedder = FakeEmbedder()
    memory = VectorMemory(embedder)
    for text in ["the red door", "the red door", "a far away tree"]:
        memory.add(text, memory.embed(text))
    assert [text for text, _ in memory.search("the red door")] == ["the red door", "the red door", "a far away tree"]
    assert [text for text, _ in memory.search("the red door", top_k=1)] == ["the red door"]


def test_search_by_text_is_search_by_its_embedding():
    embedder = FakeEmbedder()
    memory = filled(embedder)
    assert memory.search("object 3") == memory.search_vector(embedder.encode(["object 3"])[0])


def test_search_vector_on_an_empty_memory_and_top_k_past_the_count():
    memory = VectorMemory(FakeEmbedder())
    assert memory.search_vector(unit_rows(1, 16)[0]) == []
    memory.add("only", unit_rows(1, 16))
    assert [text for text, _ in memory.search_vector(unit_rows(1, 16, seed=3)[0], top_k=10)] == ["only"]


def test_add_many_rejects_a_vector_count_that_does_not_match_the_texts():
    memory = VectorMemory(FakeEmbedder())
    with pytest.raises(ValueError):
        memory.add_many(["a", "b"], unit_rows(3, 16))
    assert len(memory) == 0 and memory.index.ntotal == 0


@pytest.mark.parametrize("distinct", [4_000, 300])
def test_past_the_exact_limit_the_graph_finds_near_neighbours(distinct):
    # Memories come in clusters, as real ones do, and repeat; queries lie near stored memories.
    rng = np.random.default_rng(4)
    centres = unit_rows(200, 64, seed=5)
    vectors = centres[rng.integers(0, 200, distinct)] + 0.3 * unit_rows(distinct, 64, seed=6)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    picks = rng.integers(0, distinct, 4_000)
    memory = VectorMemory(FakeEmbedder(dimension=64), exact_up_to=0)
    memory.add_many([f"m{i}" for i in picks], vectors[picks])
    stored = vectors[np.unique(picks)]
    queries = stored[rng.integers(0, len(stored), 100)] + 0.05 * unit_rows(100, 64, seed=7)
    hits = 0
    for query in queries.astype("float32"):
        squared = ((vectors - query) ** 2).sum(axis=1)
        third = np.sort(squared[np.unique(picks)])[2]
        found = memory.search_vector(query, top_k=3)
        hits += sum(distance <= third + 1e-5 for _, distance in found)
        # Whatever it returns, the distance is the true one, nearest first.
        for text, distance in found:
            assert distance == pytest.approx(squared[int(text[1:])], abs=1e-4)
        assert [d for _, d in found] == sorted(d for _, d in found)
    assert hits / (3 * len(queries)) >= 0.95


# save and load


def test_save_and_load_give_the_same_search_results(tmp_path):
    embedder = FakeEmbedder()
    memory = filled(embedder, count=300)
    memory.save(tmp_path / "agent1")
    loaded = VectorMemory.load(tmp_path / "agent1", embedder)
    assert loaded.texts == memory.texts and loaded.index.ntotal == 300
    assert results(loaded) == results(memory)
    # It goes on remembering.
    loaded.add("a new memory", embedder.encode(["a new memory"]))
    assert loaded.search("a new memory", top_k=1)[0][0] == "a new memory"


def test_the_graph_and_repeated_memories_are_saved_too(tmp_path):
    embedder = FakeEmbedder()
    memory = filled(embedder, count=500, exact_up_to=0)
    repeats = memory.texts[::7] * 3
    memory.add_many(repeats, embedder.encode(repeats))
    memory.save(tmp_path)
    loaded = VectorMemory.load(tmp_path, embedder, exact_up_to=0)
    assert len(loaded) == len(memory) == 500 + len(repeats) and loaded.index.ntotal == 500
    assert results(loaded) == results(memory)
    loaded.add(memory.texts[0], embedder.encode(memory.texts[:1]))
    assert loaded.index.ntotal == 500  # still counted as a repeat after loading


def test_awkward_texts_and_an_empty_memory_survive_the_round_trip(tmp_path):
    embedder = FakeEmbedder()
    VectorMemory(embedder).save(tmp_path / "empty")
    assert len(VectorMemory.load(tmp_path / "empty", embedder)) == 0
    texts = ["two\nlines", "", "unicode: café \u2028 ☕", 'quotes "and" \\ backslash\r']
    memory = VectorMemory(embedder)
    memory.add_many(texts, embedder.encode(texts))
    memory.save(tmp_path / "odd")
    assert VectorMemory.load(tmp_path / "odd", embedder).texts == texts


def test_round_trip_with_the_real_model(tmp_path, embedder):
    memory = VectorMemory(embedder)
    texts = [
        "At position (2, 3, 0) facing north, I saw ['bed', 'wardrobe']. I decided to look_left.",
        "At position (7, 1, 0) facing east, I saw ['fridge', 'stove']. I decided to forward.",
        "At position (0, 5, 0) facing south, I saw ['rose_bush']. I decided to backward.",
    ]
    memory.add_many(texts, embedder.encode(texts))
    memory.save(tmp_path)
    loaded = VectorMemory.load(tmp_path, embedder)
    query = "What do I know about the kitchen with what I see: refrigerator, oven?"
    assert loaded.search(query) == memory.search(query)
    assert "fridge" in loaded.search(query)[0][0]
    assert meta_of(tmp_path)["model"] == embedder.name and meta_of(tmp_path)["dimension"] == 384


def test_saving_again_replaces_the_old_save_and_its_files(tmp_path):
    embedder = FakeEmbedder()
    filled(embedder, count=10).save(tmp_path)
    filled(embedder, count=20).save(tmp_path)
    assert len(VectorMemory.load(tmp_path, embedder)) == 20
    assert sorted(p.name.split("-")[0] for p in tmp_path.iterdir()) == ["index", "meta.json", "texts"]


def test_a_save_that_dies_before_it_finishes_leaves_the_previous_one(tmp_path, monkeypatch):
    embedder = FakeEmbedder()
    old = filled(embedder, count=10)
    old.save(tmp_path)

    def power_cut(*args):
        raise OSError("power cut")

    monkeypatch.setattr(vector_memory.os, "replace", power_cut)
    with pytest.raises(MemoryFileError, match="power cut"):
        filled(embedder, count=20).save(tmp_path)
    monkeypatch.undo()
    loaded = VectorMemory.load(tmp_path, embedder)
    assert loaded.texts == old.texts and results(loaded) == results(old)
    # The next save clears what the interrupted one left.
    loaded.save(tmp_path)
    assert len(list(tmp_path.iterdir())) == 3


def test_a_save_that_cannot_write_says_so_in_one_line(tmp_path):
    (tmp_path / "a_file").write_text("in the way")
    with pytest.raises(MemoryFileError) as caught:
        filled(FakeEmbedder()).save(tmp_path / "a_file")
    assert str(tmp_path / "a_file") in str(caught.value) and "\n" not in str(caught.value)


def test_a_different_model_is_refused_naming_both(tmp_path):
    filled(FakeEmbedder(name="org/model-a")).save(tmp_path)
    message = load_error(tmp_path, FakeEmbedder(name="org/model-b"))
    assert "org/model-a" in message and "org/model-b" in message and str(tmp_path) in message


def test_a_different_dimension_is_refused(tmp_path):
    filled(FakeEmbedder(dimension=16)).save(tmp_path)
    message = load_error(tmp_path, FakeEmbedder(dimension=32))
    # Told from meta.json alone, before the data files are read.
    assert message.startswith(str(tmp_path / "meta.json")) and "16" in message and "32" in message


def test_a_missing_directory_or_meta_file_is_refused(tmp_path):
    assert str(tmp_path / "nowhere") in load_error(tmp_path / "nowhere", FakeEmbedder())
    assert "meta.json" in load_error(tmp_path, FakeEmbedder())


@pytest.mark.parametrize("kind", ["index", "texts"])
def test_a_missing_data_file_is_refused(tmp_path, kind):
    filled(FakeEmbedder()).save(tmp_path)
    name = meta_of(tmp_path)[f"{kind}_file"]
    (tmp_path / name).unlink()
    message = load_error(tmp_path, FakeEmbedder())
    assert name in message and "missing" in message


@pytest.mark.parametrize("kind", ["index", "texts"])
def test_a_truncated_data_file_is_refused(tmp_path, kind):
    filled(FakeEmbedder()).save(tmp_path)
    path = tmp_path / meta_of(tmp_path)[f"{kind}_file"]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    message = load_error(tmp_path, FakeEmbedder())
    assert path.name in message and "checksum" in message


@pytest.mark.parametrize("cut", [0, 3, 100, 0.5, -1])
def test_a_corrupt_index_that_matches_its_checksum_is_refused(tmp_path, cut):
    filled(FakeEmbedder()).save(tmp_path)
    data = (tmp_path / meta_of(tmp_path)["index_file"]).read_bytes()
    rewrite(tmp_path, "index", data[: int(len(data) * cut) if isinstance(cut, float) else cut])
    assert "FAISS index" in load_error(tmp_path, FakeEmbedder())


def test_corrupt_texts_are_refused(tmp_path):
    filled(FakeEmbedder()).save(tmp_path)
    rewrite(tmp_path, "texts", b'"fine"\n{"not": "a string"}\n')
    assert "line 2" in load_error(tmp_path, FakeEmbedder())
    rewrite(tmp_path, "texts", b'"fine"\n"\xff\xfe"\n')
    assert "line 2" in load_error(tmp_path, FakeEmbedder())


def test_texts_that_do_not_match_the_index_count_are_refused(tmp_path):
    memory = filled(FakeEmbedder(), count=50)
    memory.save(tmp_path)
    rewrite(tmp_path, "texts", "".join(json.dumps(t) + "\n" for t in memory.texts[:-1]).encode())
    message = load_error(tmp_path, FakeEmbedder())
    assert "50" in message and "49" in message


def test_a_meta_count_that_does_not_match_the_texts_is_refused(tmp_path):
    filled(FakeEmbedder(), count=50).save(tmp_path)
    meta = meta_of(tmp_path)
    meta["count"] = 51
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert "51" in load_error(tmp_path, FakeEmbedder())


@pytest.mark.parametrize("meta_text", ["{not json", "[]", '{"format": 1}', "\xff"])
def test_a_corrupt_meta_file_is_refused(tmp_path, meta_text):
    filled(FakeEmbedder()).save(tmp_path)
    (tmp_path / "meta.json").write_text(meta_text, encoding="latin-1")
    assert "meta.json" in load_error(tmp_path, FakeEmbedder())


def test_an_unknown_format_is_refused(tmp_path):
    filled(FakeEmbedder()).save(tmp_path)
    meta = meta_of(tmp_path)
    meta["format"] = 99
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert "format 99" in load_error(tmp_path, FakeEmbedder())


def test_meta_cannot_point_outside_its_directory(tmp_path):
    filled(FakeEmbedder()).save(tmp_path / "saved")
    meta = meta_of(tmp_path / "saved")
    meta["index_file"] = os.path.join("..", "elsewhere.faiss")
    (tmp_path / "saved" / "meta.json").write_text(json.dumps(meta))
    assert "not a file name" in load_error(tmp_path / "saved", FakeEmbedder())
