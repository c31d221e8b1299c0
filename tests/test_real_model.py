"""A team driven by a real language model (SmolLM2-135M-Instruct) through a real local inference server."""

import json
import subprocess
import sys

from explorer.records.trace import read_trace
from tests.support.paths import ROOT

pytest_plugins = ("tests.support.llama_server",)


def test_a_real_small_model_decides_under_a_json_schema(small_model_server, tmp_path):
    run_dir = tmp_path / "run"
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "--mode",
            "mock",
            "--agents",
            "2",
            "--steps",
            "3",
            "-q",
            "--model",
            "openai/smollm2",
            "--api-base",
            small_model_server,
            "--reply-format",
            "json",
            "--timeout",
            "300",  # a loaded machine evaluates the prompt slowly: a retry would start it again
            "--run-dir",
            str(run_dir),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    trace = read_trace(run_dir / "trace.jsonl")
    summary = json.loads((run_dir / "summary.json").read_text())
    calls = [call for line in trace for call in line["llm"]["calls"]]
    # llama-cpp-python's server refuses OpenAI's json_schema dialect and takes json_object: every call
    # the agents made went under the schema, and each reply named an available action.
    assert calls and {call["format"] for call in calls} == {"json"}
    assert summary["llm"]["parse_failures"] == 0 and summary["llm"]["failed_calls"] == 0
    assert all(line["decision"] and line["action"] == line["decision"]["action"] for line in trace)
