"""main.py against a local OpenAI-compatible server that misbehaves in every way a provider can.

The runs are main.py's `main` in this process (tests/support/in_process.py), but for Ctrl-C, which only a process shows.
"""

import itertools
import json
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from explorer.records.run_files import TraceLines
from explorer.testing.chat_server import ChatServer, Scripted, error
from tests.support.paths import ROOT

GOOD = "```yaml\nthinking: look around\naction: look_left\nreason: scan\nmessage_to_others: nothing yet\n```"
GARBAGE = [
    "",
    "I'm sorry, but I can't help with that.",
    "action: fly",
    "```yaml\naction: [\n```",
    "<think>I should move forward</think>",
    '{"action": ',
    "thinking: no action here",
    "action: !!python/object/apply:os.system ['true']",
]


def alternating(first, second):
    """An answer function: `first(n)` for even requests, `second(n)` for odd ones, in arrival order."""
    counter, lock = itertools.count(), threading.Lock()

    def answer(request):
        with lock:
            n = next(counter)
        return first(n) if n % 2 == 0 else second(n)

    return answer


def run_main(in_process, tmp_path, api_base, *args, volume="-q"):
    """A mock run of two agents asking the model at `api_base`, in this process (tests/support/in_process.py)."""
    run_dir = tmp_path / "run"
    result = in_process.run(
        "--mode",
        "mock",
        "--agents",
        "2",
        "--steps",
        "6",
        "--model",
        "openai/test-model",
        "--api-base",
        api_base,
        "--run-dir",
        str(run_dir),
        volume,
        *args,
    )
    summary = json.loads((run_dir / "summary.json").read_text())
    return result, summary, list(TraceLines(run_dir / "trace.jsonl")), run_dir


def test_garbage_half_the_time_slows_the_run_but_never_stops_it(in_process, tmp_path):
    with ChatServer(alternating(lambda n: GOOD, lambda n: GARBAGE[n // 2 % len(GARBAGE)])) as server:
        result, summary, trace, _ = run_main(in_process, tmp_path, server.api_base)
    assert result.returncode == 0, result.stderr
    assert summary["status"] == "completed" and len(trace) == 12
    # Every request is accounted: a call, or a retry (a blank reply is retried once).
    assert summary["llm"]["calls"] + summary["llm"]["retries"] == len(server.records)
    failures = [r for r in trace if r["parse_failure"]]
    assert summary["llm"]["parse_failures"] == len(failures)
    assert all(r["action"] == "look_right" and len(r["llm"]["calls"]) == 2 for r in failures)
    assert all(call["reply_error"] for r in failures for call in r["llm"]["calls"])
    assert all(r["action"] == "look_left" for r in trace if not r["parse_failure"])
    assert any(len(r["llm"]["calls"]) == 2 and not r["parse_failure"] for r in trace)  # re-prompts that worked
    assert "Traceback" not in result.stderr


def test_a_provider_failing_half_its_requests_is_retried(in_process, tmp_path):
    with ChatServer(alternating(lambda n: error(500), lambda n: GOOD)) as server:
        result, summary, trace, _ = run_main(in_process, tmp_path, server.api_base)
    assert result.returncode == 0, result.stderr
    assert len(trace) == 12 and all(r["action"] == "look_left" for r in trace)
    assert summary["llm"]["retries"] == 12 and summary["llm"]["errors"] == 0
    assert len(server.records) == 24
    assert sum(call["retries"] for r in trace for call in r["llm"]["calls"]) == 12


def test_a_run_in_which_every_model_call_fails_says_so_and_counts_them(in_process, tmp_path):
    with ChatServer(lambda request: error(404)) as server:
        result, summary, trace, _ = run_main(in_process, tmp_path, server.api_base)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"main.py: error: every model call of the run failed: see the errors in trace.jsonl and run.log "
        f"(see {tmp_path / 'run' / 'run.log'})"
    ]
    assert summary["status"] == "failed" and len(trace) == 12
    assert summary["llm"]["calls"] == summary["llm"]["failed_calls"] == len(server.records) == 12
    assert all(call["error"] == "not_found" for r in trace for call in r["llm"]["calls"])


def test_a_good_server_gets_exactly_one_call_per_agent_step(in_process, tmp_path):
    with ChatServer(lambda request: GOOD) as server:
        result, summary, trace, _ = run_main(
            in_process, tmp_path, server.api_base, "--price-in", "1", "--price-out", "2"
        )
    assert result.returncode == 0, result.stderr
    assert len(server.records) == len(trace) == summary["llm"]["calls"] == 12
    # 100 tokens in and 20 out per call, at $1 and $2 per million.
    assert abs(summary["llm"]["cost_usd"] - 12 * (100 * 1 + 20 * 2) / 1e6) < 1e-9
    assert "Model calls: 12" in result.stdout


def test_the_api_key_never_reaches_the_run_directory_or_the_console(in_process, tmp_path, monkeypatch):
    secret = "placeholder-not-a-key-DoNotLeakMe-0123"
    counter = itertools.count()

    def echo_the_key(request):
        header = server.records[-1].headers.get("Authorization", "")
        if next(counter) % 2:
            return error(400, f"bad key {header}")
        return f"thinking: my key is {header}\naction: forward\nmessage_to_others: {header}"

    with ChatServer(echo_the_key) as server:
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        result, _, _, run_dir = run_main(in_process, tmp_path, server.api_base, volume="-v")  # log everything
    assert result.returncode == 0, result.stderr
    assert server.records[0].headers["Authorization"] == f"Bearer {secret}"  # the key was really sent
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path.name
    assert secret not in result.stdout + result.stderr


def test_a_refused_key_stops_the_run_at_once_with_one_line(in_process, tmp_path):
    with ChatServer(lambda request: error(401, "Incorrect API key provided")) as server:
        result, summary, trace, _ = run_main(in_process, tmp_path, server.api_base)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "refused the credentials" in lines[0] and "Traceback" not in result.stderr
    assert summary["status"] == "failed"
    assert len(server.records) <= 2  # one call per agent at most, none retried
    assert trace == []


def test_a_refused_connection_is_reported_every_step_and_the_run_ends_failed(in_process, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the with-block ends
    # Past the model check (which would refuse the run at once), every step is taken and recorded; a run
    # whose every model call failed then says so.
    result, summary, trace, _ = run_main(
        in_process, tmp_path, f"http://127.0.0.1:{port}/v1", "--agents", "1", "--steps", "2", "--no-preflight"
    )
    assert result.returncode == 1 and "every model call of the run failed" in result.stderr
    assert summary["status"] == "failed" and len(trace) == 2
    assert summary["llm"]["errors"] == 2 and summary["llm"]["failed_calls"] == 2
    assert all(r["action"] == "look_right" and "connection" in r["errors"][0] for r in trace)


def test_a_stall_past_the_timeout_is_cut_off(in_process, tmp_path):
    stall_then_answer = alternating(lambda n: Scripted(text=GOOD, delay=5), lambda n: GOOD)
    with ChatServer(stall_then_answer) as server:
        result, summary, trace, _ = run_main(
            in_process, tmp_path, server.api_base, "--agents", "1", "--steps", "2", "--timeout", "0.5"
        )
    assert result.returncode == 0, result.stderr
    assert [r["action"] for r in trace] == ["look_left", "look_left"]
    assert summary["llm"]["retries"] >= 1
    assert all(call["latency"] < 4 for r in trace for call in r["llm"]["calls"])


def counting_in_flight(delay):
    """A slow answer function, and a dict with the most requests it ever had in flight."""
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def answer(request):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(delay)
        with lock:
            state["now"] -= 1
        return GOOD

    return answer, state


@pytest.mark.parametrize("bound, most", [(["--max-concurrency", "2"], 2), ([], 4)])
def test_max_concurrency_bounds_the_model_calls_in_flight(in_process, tmp_path, bound, most):
    answer, state = counting_in_flight(0.3)
    with ChatServer(answer) as server:
        result, summary, _, _ = run_main(in_process, tmp_path, server.api_base, "--agents", "4", "--steps", "3", *bound)
    assert result.returncode == 0, result.stderr
    assert summary["llm"]["calls"] == 12
    assert state["most"] == most  # four agents overlap their calls, up to the bound


def test_ctrl_c_is_felt_at_once_while_the_model_hangs(tmp_path):
    run_dir = tmp_path / "run"
    with ChatServer(lambda request: Scripted(text="action: forward", delay=120)) as server:
        process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "main.py"),
                "--agents",
                "2",
                "--steps",
                "6",
                "--model",
                "openai/test-model",
                "--api-base",
                server.api_base,
                "--run-dir",
                str(run_dir),
                "-q",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(server.records) < 2:
            time.sleep(0.1)
        assert len(server.records) == 2  # both agents wait on the model (60 s timeout by default)
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
        stopped_after = time.monotonic() - interrupted
    assert process.returncode == 130, stderr
    assert stopped_after < 15, stopped_after  # not the 60 s the calls could still take
    assert "Interrupted (SIGINT): stopping now" in stdout  # said on the console, even with -q
    assert "abandoning model calls in flight" in (run_dir / "run.log").read_text()
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "interrupted"


def test_goal_level_decisions_ask_the_model_only_when_there_is_something_to_decide(in_process, tmp_path):
    def answer(request):
        prompt = request["messages"][-1]["content"]
        first_ask = "You are Agent1," in prompt and "## Step 1 of" in prompt and "could not be used" not in prompt
        return "goal: G9" if first_ask else "```yaml\ngoal: G1\nreason: nearest\n```"

    with ChatServer(answer) as server:
        result, summary, trace, _ = run_main(
            in_process, tmp_path, server.api_base, "--decide", "goals", "--steps", "15"
        )
    assert result.returncode == 0, result.stderr
    assert summary["decide"] == "goals" and summary["decisions"] == len(trace) == 30
    walked = [r for r in trace if r["policy"] == "planner"]
    asked = [r for r in trace if r["policy"] == "openai/test-model"]
    assert walked and summary["planner_steps"] == len(walked) and len(asked) + len(walked) == len(trace)
    # Steps walked by the planner cost no model call and send no prompt.
    assert all(r["prompt"] == "" and r["llm"]["calls"] == [] and r["action"] for r in walked)
    assert summary["llm"]["calls"] == len(server.records) < len(trace)
    assert summary["team"]["model_calls_per_agent_step"] < 1
    assert summary["per_agent"]["Agent1"]["policy"] == "openai/test-model"
    # The prompt lists the goals; a goal that does not exist is refused and re-asked once.
    prompts = [record.body["messages"][-1]["content"] for record in server.records]
    assert all("- G1: look" in p and "`goal`: the id of one of the goals" in p for p in prompts)
    assert trace[0]["agent_id"] == "Agent1" and [c["reply_error"] for c in trace[0]["llm"]["calls"]] == [
        "unknown goal 'G9'",
        None,
    ]
    assert sum("a `goal` that is one of G1" in p for p in prompts) == 1
