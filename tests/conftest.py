import pytest

from memory.embedder import SentenceEmbedder


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 model, loaded once for the whole session."""
    model = SentenceEmbedder()
    model.wait_ready()
    return model
