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


# The files whose tests take longest, longest first (`pytest --durations`, summed by file). xdist gives each
# worker a whole file at a time (--dist loadfile) in collection order: started first, they run beside the short
# files instead of after them, when one worker would have nothing left to do. Unlisted files follow in their order.
LONGEST_FILES = (
    "test_real_model.py",
    "test_sweep_ray.py",
    "test_unity.py",
    "test_sweep_tracking.py",
    "test_onnx_embedder.py",
    "test_sweep_study.py",
    "test_serve_guest.py",
    "test_sweep_safety.py",
    "test_serve.py",
    "test_split_team.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FILES)))
