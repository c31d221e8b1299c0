import pytest

from memory.embedder import SentenceEmbedder
from tests.support.in_process import InProcessMain


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 model, loaded once for the whole session."""
    model = SentenceEmbedder()
    model.wait_ready()
    return model


@pytest.fixture
def in_process(embedder):
    """main.py's `main` run in this process, on the session's embedder (tests/support/in_process.py)."""
    return InProcessMain(embedder)
