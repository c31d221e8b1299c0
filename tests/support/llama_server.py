"""The real small language model's server as session fixtures, for the tests that need one
(explorer/testing/local_model.py serves it). Without the server or the model file the tests skip, saying what
to install, except in CI (CI=true), where they must run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from explorer.testing.local_model import GEMMA, INSTALL, SMOLLM2, LocalModel, ServerFailed, missing_parts, serving


@pytest.fixture(scope="session")
def small_model_server(tmp_path_factory) -> Iterator[str]:
    """The base URL (http://127.0.0.1:PORT/v1) of the served SmolLM2."""
    yield from _served_for_tests(SMOLLM2, tmp_path_factory)


@pytest.fixture(scope="session")
def gemma_server(tmp_path_factory) -> Iterator[str]:
    """The base URL of the served Gemma 3 270M (base)."""
    yield from _served_for_tests(GEMMA, tmp_path_factory)


def _served_for_tests(model: LocalModel, tmp_path_factory) -> Iterator[str]:
    missing = missing_parts(model)
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}: CI must run the real-model tests ({INSTALL})")
        pytest.skip(f"{missing}: {INSTALL}")
    try:
        with serving(tmp_path_factory.mktemp("llama") / "server.log", model) as base:
            yield base
    except ServerFailed as failure:
        pytest.fail(str(failure))
