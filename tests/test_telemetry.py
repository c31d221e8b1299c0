"""--telemetry otlp against a real Arize Phoenix (`phoenix serve`, harness/phoenix_server.py), the spans read
back through Phoenix's REST API: a model run against the local stub server (the tree, the GenAI attributes, the
token counts the summary's, no prompt by default, no key ever), content when asked, a team split over two
processes on a real Redis, a sweep's runs; and a collector that is not there, which costs the run nothing.

Phoenix lives in a virtual environment of its own (README, Telemetry); where its command is missing the tests
skip, saying how to install it, except under CI=true, where they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from explorer.api import make_config
from explorer.records import telemetry
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.testing.chat_server import ChatServer
from explorer.testing.ports import free_port
from harness.phoenix_server import PhoenixServer, phoenix_command
from tests.support.paths import ROOT

pytest_plugins = ("tests.support.redis_server",)

SECRET = "placeholder-not-a-key-DoNotLeakMe-4242"
REPLY = "```yaml\naction: forward\nreason: the corridor is open\nmessage_to_others: corridor ahead is open\n```"
AGENTS, STEPS = 2, 6
EXPLORER_NODES = ["perception", "retrieve_memory", "communication", "decision", "execution", "update_memory", "hand_in"]
INSTALL = "python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install 'arize-phoenix>=20,<21'"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    command = phoenix_command()
    if command is None:
        message = f"no `phoenix` command: {INSTALL} (or name one with PHOENIX=...)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    server = PhoenixServer(command, tmp_path_factory.mktemp("phoenix"))
    yield server
    server.stop()


def model_run(in_process, run_dir: Path, api_base: str, *args: str):
    """A mock run of AGENTS agents for STEPS steps, asking the model at `api_base`, with --telemetry otlp."""
    return in_process.run(
        "--mode",
        "mock",
        "--agents",
        str(AGENTS),
        "--steps",
        str(STEPS),
        "--model",
        "openai/test-model",
        "--api-base",
        api_base,
        "--telemetry",
        "otlp",
        "--run-dir",
        str(run_dir),
        "-q",
        *args,
    )


def sent_to(monkeypatch, phoenix: PhoenixServer, project: str) -> None:
    """The run's spans to `phoenix`, into a project of their own (Phoenix's resource attribute for it)."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.url)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def project_spans(phoenix: PhoenixServer, project: str, seconds: float = 60) -> list[dict]:
    """The project's spans once the run's root is there and their count has settled (Phoenix writes in the
    background what it took)."""
    deadline, before = time.monotonic() + seconds, -1
    while True:
        try:
            spans = phoenix.spans(project)
        except OSError:  # the project is made with its first span
            spans = []
        if spans and len(spans) == before and any(s["parent_id"] is None for s in spans):
            return spans
        if time.monotonic() > deadline:
            raise AssertionError(f"Phoenix holds {len(spans)} spans of {project}, and no settled run")
        before = len(spans)
        time.sleep(1.0)


def children(spans: list[dict], parent: dict) -> list[dict]:
    return [s for s in spans if s["parent_id"] == parent["context"]["span_id"]]


def test_a_model_run_is_one_trace_of_agent_steps_nodes_and_model_calls(phoenix, in_process, tmp_path, monkeypatch):
    sent_to(monkeypatch, phoenix, "model-run")
    with ChatServer(lambda request: REPLY) as server:
        result = model_run(in_process, tmp_path / "run", server.api_base)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    lines = list(TraceLines(tmp_path / "run" / "trace.jsonl"))
    spans = project_spans(phoenix, "model-run")

    # One trace: the run's root, an agent-step span for each line of the trace, under it its nodes.
    assert len({s["context"]["trace_id"] for s in spans}) == 1
    (root,) = [s for s in spans if s["parent_id"] is None]
    assert root["name"] == "invoke_workflow multi-agent-explorer"
    assert root["attributes"]["explorer.option.model"] == "openai/test-model"
    assert root["attributes"]["explorer.status"] == "completed"
    steps = [s for s in children(spans, root) if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    assert len(steps) == len(lines) == AGENTS * STEPS
    assert {s["span_kind"] for s in steps} == {"AGENT"}
    assert Counter(s["attributes"]["gen_ai.agent.name"] for s in steps) == {"Agent1": STEPS, "Agent2": STEPS}
    for step in steps:
        nodes = sorted(children(spans, step), key=lambda s: (s["start_time"], s["end_time"]))
        assert [n["name"] for n in nodes] == EXPLORER_NODES
        assert step["start_time"] <= nodes[0]["start_time"] and nodes[-1]["end_time"] <= step["end_time"]

    # A model call under the decision node that made it, with the conventions' attributes.
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert len(chats) == summary["llm"]["calls"] == AGENTS * STEPS
    by_id = {s["context"]["span_id"]: s for s in spans}
    for chat in chats:
        attributes = chat["attributes"]
        assert chat["span_kind"] == "LLM" and by_id[chat["parent_id"]]["name"] == "decision"
        assert attributes["gen_ai.request.model"] == "openai/test-model"
        assert attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.response.finish_reasons"] == ["stop"]
        assert attributes["explorer.retries"] == 0 and attributes["explorer.parse_failure"] is False
    # The token counts are the summary's.
    assert sum(c["attributes"]["gen_ai.usage.input_tokens"] for c in chats) == summary["llm"]["prompt_tokens"] > 0
    assert sum(c["attributes"]["gen_ai.usage.output_tokens"] for c in chats) == summary["llm"]["completion_tokens"]

    # Memory searches, embeddings and messages, with their route.
    assert any(s["name"] == "retrieval memory" for s in spans)
    assert any(s["attributes"].get("gen_ai.operation.name") == "embeddings" for s in spans)
    sent = [e for s in spans for e in s["events"] if e["name"] == "message sent"]
    assert len(sent) == sum(1 for line in lines if line["message_out"])
    assert sent[0]["attributes"]["explorer.message.route"].endswith("-> all")

    # No prompt or reply text by default, and never the key.
    everything = json.dumps(spans)
    assert "gen_ai.input.messages" not in everything and "gen_ai.output.messages" not in everything
    assert lines[0]["prompt"][:60] not in everything and "corridor ahead is open" not in everything
    assert SECRET not in everything


def test_prompts_and_replies_go_into_spans_only_when_asked_bounded_and_redacted(
    phoenix, in_process, tmp_path, monkeypatch
):
    sent_to(monkeypatch, phoenix, "content")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")

    def echo_the_key(request):  # a reply that carries the key, as a confused server's might
        return REPLY.replace("corridor ahead is open", f"my key is {SECRET}")

    with ChatServer(echo_the_key) as server:
        result = model_run(in_process, tmp_path / "run", server.api_base, "--steps", "2")
    assert result.returncode == 0, result.stderr
    spans = project_spans(phoenix, "content")
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert chats
    for chat in chats:
        prompt = json.loads(chat["attributes"]["gen_ai.input.messages"])[0]["parts"][0]["content"]
        reply = json.loads(chat["attributes"]["gen_ai.output.messages"])[0]["parts"][0]["content"]
        assert "Agent" in prompt and len(prompt) <= 4_100
        assert "my key is ***" in reply
    assert SECRET not in json.dumps(spans)


def test_a_collector_that_is_not_there_costs_the_run_nothing_but_one_warning(in_process, tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    run_dir = tmp_path / "run"
    began = time.monotonic()
    result = in_process.run(
        "--mode", "mock", "--agents", "2", "--steps", "30", "--telemetry", "otlp", "--run-dir", str(run_dir), "-q"
    )
    took = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and sum(summary["steps"].values()) == 60
    assert len(list(TraceLines(run_dir / "trace.jsonl"))) == 60 and (run_dir / "report.html").is_file()
    log = (run_dir / "run.log").read_text()
    assert log.count("did not take the run's spans") == 1, log
    assert "spans were not sent" in log
    assert "Failed to export" not in result.stderr + result.stdout  # the exporter's own lines are kept quiet
    assert took < 60, took  # a bound, not a benchmark (bench/telemetry.py measures the delay)


def test_an_unknown_telemetry_is_one_line_and_exit_code_2(in_process, tmp_path):
    result = in_process.run("--mode", "mock", "--telemetry", "zipkin", "--run-dir", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "--telemetry" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "run").exists()
    assert make_config(telemetry="otlp").output.telemetry == "otlp"
    with pytest.raises(ConfigError, match="unknown --telemetry 'zipkin'"):
        make_config(telemetry="zipkin")


def test_telemetry_without_its_packages_is_one_line_naming_the_extra(in_process, tmp_path, monkeypatch):
    monkeypatch.setattr(telemetry, "OTLP_PACKAGES", ("opentelemetry.no_such_exporter",))
    result = in_process.run("--mode", "mock", "--telemetry", "otlp", "--run-dir", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "[telemetry]" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "run").exists()


def main_py(*args: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def project_env(phoenix: PhoenixServer, project: str) -> dict[str, str]:
    return {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url,
        "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}",
    }


def test_a_team_split_over_two_processes_is_one_trace(phoenix, tmp_path, redis_server, run_id):
    team = ["--agents", "2", "--steps", "5", "--store", redis_server.url, "--run-id", run_id, "-q"]
    team += ["--telemetry", "otlp"]
    environment = project_env(phoenix, "split")
    first = main_py(*team, "--local-agents", "Agent1", "--run-dir", str(tmp_path / "first"), env=environment)
    second = main_py(*team, "--local-agents", "Agent2", "--run-dir", str(tmp_path / "second"), env=environment)
    for process in (first, second):
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
    spans = project_spans(phoenix, "split")
    assert len({s["context"]["trace_id"] for s in spans}) == 1  # the trace context went through the store
    (root,) = [s for s in spans if s["parent_id"] is None]
    runs = [s for s in spans if s["name"].startswith("invoke_workflow")]
    assert len(runs) == 2 and all(s is root or s["parent_id"] == root["context"]["span_id"] for s in runs)
    steps = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    # Each process sends its own agents' steps, under its own part of the run: each step once.
    assert Counter(s["attributes"]["gen_ai.agent.name"] for s in steps) == {"Agent1": 5, "Agent2": 5}
    parents = {
        agent: {s["parent_id"] for s in steps if s["attributes"]["gen_ai.agent.name"] == agent}
        for agent in Counter(s["attributes"]["gen_ai.agent.name"] for s in steps)
    }
    assert parents["Agent1"] != parents["Agent2"] and {len(ids) for ids in parents.values()} == {1}
    assert parents["Agent1"] | parents["Agent2"] == {s["context"]["span_id"] for s in runs}


def test_a_sweep_s_runs_carry_its_name_and_condition(phoenix, tmp_path):
    sweep = tmp_path / "study.yaml"
    sweep.write_text(
        "out: out\n"
        "conditions:\n"
        "  - {name: offline}\n"
        "  - {name: silent, comm: false}\n"
        "fixed: {agents: 1, steps: 2, telemetry: otlp}\n"
    )
    # The sweep's runs are `python -m explorer` in the sweep's folder: this checkout's, whatever is installed.
    environment = {**project_env(phoenix, "sweep"), "PYTHONPATH": str(ROOT)}
    process = main_py("--sweep", str(sweep), env=environment, cwd=tmp_path)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    spans = project_spans(phoenix, "sweep")
    roots = [s for s in spans if s["parent_id"] is None]
    assert sorted(r["attributes"]["explorer.sweep.condition"] for r in roots) == ["offline", "silent"]
    assert {r["attributes"]["explorer.sweep.name"] for r in roots} == {"out"}
    assert {r["attributes"]["explorer.option.telemetry"] for r in roots} == {"otlp"}
