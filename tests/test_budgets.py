"""Budgets (--max-cost, --max-calls, --max-tokens) and --fallback, against a local OpenAI-compatible server."""

import json
import logging
import math
import subprocess
import sys
import threading

import pytest

from explorer.config.run_config import RunConfig
from explorer.model.budget import Budget, Limits
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.testing.chat_server import ChatServer, Scripted, chat_completion, error
from tests.support.in_process import main_here
from tests.support.paths import ROOT

MODEL = "openai/test-model"
GOOD = "```yaml\nthinking: look around\naction: look_left\nreason: scan\nmessage_to_others: ''\n```"
TOKENS_PER_CALL = 120  # the stub server's usage: 100 prompt and 20 completion tokens


def run(run_dir, embedder, **settings):
    config = RunConfig.of(
        run_dir=run_dir, verbosity=-1, **{"agents": 2, "steps": 8, "model": MODEL, **settings}
    ).check()
    summary = ExplorationRun(config, embedder=embedder).execute()
    return list(TraceLines(run_dir / "trace.jsonl")), summary


# ---- the budget itself -----------------------------------------------------------------------------


def test_a_call_budget_admits_exactly_its_requests_however_many_threads_ask():
    budget, spent = Budget(Limits(max_calls=50)), []
    budget.when_spent(spent.append)
    admitted = []

    def ask():
        admitted.extend(budget.admit() for _ in range(40))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert admitted.count(True) == 50 and budget.calls == 50
    for _ in range(50):
        budget.charge(0, None)  # each request's answer (or failure) came
    assert spent == ["max_calls"]  # told once


def test_a_request_given_back_is_given_back_whole():
    budget, told = Budget(Limits(max_calls=1)), []
    budget.when_spent(told.append)
    assert budget.admit()
    budget.give_back()  # the server refused its reply format outright
    assert (budget.calls, budget.spent, told) == (0, None, [])
    assert budget.admit()  # the same call, in the next format
    assert not budget.admit()  # the last request is under way: no other starts
    budget.charge(120, None)
    assert (budget.spent, told) == ("max_calls", ["max_calls"]) and not budget.admit()


def test_tokens_and_cost_run_out_when_the_replies_say_so():
    tokens = Budget(Limits(max_tokens=250))
    for _ in range(2):
        assert tokens.admit()
        tokens.charge(120, None)
    assert tokens.spent is None and tokens.admit()
    tokens.charge(120, None)
    assert tokens.spent == "max_tokens" and not tokens.admit()
    cost = Budget(Limits(max_cost=0.01))
    cost.charge(0, 0.004)
    cost.charge(0, None)  # a price unknown counts nothing
    assert cost.spent is None
    cost.charge(0, 0.006)
    assert cost.spent == "max_cost"
    told = []
    cost.when_spent(told.append)
    assert told == ["max_cost"]  # a budget already spent says so at once


# ---- a run that reaches its budget -------------------------------------------------------------------


def test_a_call_budget_stops_the_run_cleanly_and_no_request_goes_past_it(tmp_path, embedder):
    with ChatServer(lambda request: GOOD) as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base, max_calls=5)
    assert len(server.records) <= 5  # counted at the server
    assert summary["status"] == "budget_exhausted"
    assert summary["budget"] == {"max_cost": None, "max_calls": 5, "max_tokens": None, "exhausted": "max_calls"}
    assert summary["llm"]["calls"] == len(server.records)
    # The round under way finished: both agents took it, one of them without a model's decision.
    steps = summary["steps"]
    assert steps["Agent1"] == steps["Agent2"] == 3 < 8
    last = [line for line in trace if line["step"] == 3]
    refused = [call for line in last for call in line["llm"]["calls"] if call["error"] == "budget"]
    assert len(refused) == 1 and summary["llm"]["budget_refused"] == 1
    for name in ("summary.json", "report.html", "config.json", "memory"):
        assert (tmp_path / "run" / name).exists()
    assert json.loads((tmp_path / "run" / "config.json").read_text())["max_calls"] == 5


def test_a_token_budget_stops_the_run(tmp_path, embedder):
    with ChatServer(lambda request: GOOD) as server:
        _, summary = run(tmp_path / "run", embedder, api_base=server.api_base, max_tokens=3 * TOKENS_PER_CALL)
    assert summary["status"] == "budget_exhausted" and summary["budget"]["exhausted"] == "max_tokens"
    # The third reply spent it; the call under way beside it finished.
    assert 3 <= len(server.records) <= 4
    assert summary["steps"]["Agent1"] == summary["steps"]["Agent2"] == 2


def test_a_replay_of_a_budget_run_stops_where_it_stopped(tmp_path, embedder, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(lambda request: GOOD) as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base, max_calls=5)
    replayed, again = run(tmp_path / "replay", embedder, max_calls=5, replay_replies=tmp_path / "run")
    assert again["status"] == "budget_exhausted" and again["steps"] == summary["steps"]

    def decisions(lines):
        return [(line["agent_id"], line["step"], line["action"], line["policy"]) for line in lines]

    assert decisions(replayed) == decisions(trace)


def test_the_exit_code_of_a_budget_stop_is_its_own(tmp_path):
    with ChatServer(lambda request: GOOD) as server:
        result = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), "--agents", "2", "--steps", "6", "--model", MODEL]
            + ["--api-base", server.api_base, "--max-calls", "2", "--run-dir", str(tmp_path / "run"), "-q"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "budget_exhausted"


def test_a_request_refused_for_its_reply_format_does_not_spend_the_call_budget(tmp_path, embedder):
    def answer(request):  # a server that takes no response_format, in any dialect
        return error(422, "response_format: unsupported") if "response_format" in request else GOOD

    with ChatServer(answer) as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base, agents=1, max_calls=1)
    answered = [record for record in server.records if "response_format" not in record.body]
    assert len(answered) == 1 and summary["llm"]["calls"] == 1
    assert summary["status"] == "budget_exhausted" and summary["budget"]["exhausted"] == "max_calls"
    assert trace[0]["action"] == "look_left" and trace[0]["llm"]["calls"][0]["error"] is None


def usage_of(prompt_tokens, completion_tokens):
    """A server that answers well and reports this usage."""

    def answer(request):
        body = chat_completion(GOOD, request["model"])
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        return Scripted(body=body)

    return answer


@pytest.mark.parametrize(
    ("prompt_tokens", "completion_tokens", "told"),
    [
        (-4_000_000, -4_000_000, "prompt_tokens -4000000, completion_tokens -4000000"),
        (10**15, 20, "prompt_tokens 1000000000000000"),
        (3, 20, "prompt_tokens 3"),  # for a prompt of thousands of characters
        (None, None, "prompt_tokens 0, completion_tokens 0"),  # no usage at all: litellm gives zeros
    ],
)
def test_usage_a_server_cannot_have_spent_is_estimated_so_a_budget_still_trips(
    tmp_path, embedder, prompt_tokens, completion_tokens, told
):
    with ChatServer(usage_of(prompt_tokens, completion_tokens)) as server:
        trace, summary = run(
            tmp_path / "run", embedder, api_base=server.api_base, max_tokens=4_000, max_cost=0.004, price_in=1.0
        )
    assert summary["status"] == "budget_exhausted" and summary["budget"]["exhausted"] in ("max_tokens", "max_cost")
    calls = [call for line in trace for call in line["llm"]["calls"] if call["error"] is None]
    assert 1 <= len(calls) < 16
    for call in calls:  # the prompt's length (thousands of characters) over four, the reply's likewise
        assert 300 < call["prompt_tokens"] < 5_000 and call["completion_tokens"] == math.ceil(len(GOOD) / 4)
        assert call["cost_usd"] == pytest.approx(call["prompt_tokens"] / 1e6)
    log = (tmp_path / "run" / "run.log").read_text()
    assert log.count("cannot have spent") == 1 and told in log


# ---- what is refused at start --------------------------------------------------------------------------


def test_a_cost_budget_on_a_model_with_no_price_is_refused_unless_prices_are_given(tmp_path, embedder):
    with ChatServer(lambda request: GOOD) as server:
        with pytest.raises(ConfigError, match="--max-cost: the price of openai/test-model is unknown"):
            run(tmp_path / "refused", embedder, api_base=server.api_base, max_cost=0.5)
        assert not (tmp_path / "refused").exists()
        _, summary = run(
            tmp_path / "priced", embedder, api_base=server.api_base, max_cost=0.0003, price_in=1.0, price_out=1.0
        )
    assert summary["status"] == "budget_exhausted" and summary["budget"]["exhausted"] == "max_cost"


@pytest.mark.parametrize("model", ["offline", "random", "tests.test_api:TurnRight"])
def test_a_budget_given_to_a_run_that_asks_no_model_is_warned_of(tmp_path, embedder, caplog, model):
    # Warned of, not refused: a sweep may vary the model under one budget, and its offline runs still run.
    with caplog.at_level(logging.WARNING, logger="explorer"):
        _, summary = run(tmp_path / "run", embedder, model=model, steps=2, max_calls=5, max_tokens=100)
    assert summary["status"] == "completed"
    said = [record.getMessage() for record in caplog.records if "bound nothing" in record.getMessage()]
    assert said == [
        f"--max-calls and --max-tokens bound nothing: this run's policies ({model}) make no model calls it counts"
    ]


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (["--max-calls", "0"], "--max-calls must be at least 1, not 0"),
        (["--max-tokens", "-5"], "--max-tokens must be at least 1"),
        (["--max-cost", "nan"], "--max-cost must be a number of dollars"),
        (["--fallback", "think"], "--fallback"),
    ],
)
def test_bad_budgets_are_refused_in_one_line(flags, problem):
    result = main_here(*flags)
    assert result.returncode == 2
    assert problem in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert "Traceback" not in result.stderr


# ---- --fallback -------------------------------------------------------------------------------------


def test_offline_fallback_decides_the_steps_the_model_could_not_and_says_so(tmp_path, embedder):
    def answer(request):  # Agent1 never answers usably; Agent2 always does
        return "I cannot help with that." if "You are Agent1" in request["messages"][-1]["content"] else GOOD

    with ChatServer(answer) as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base, fallback="offline", steps=5)
    agent1 = [line for line in trace if line["agent_id"] == "Agent1"]
    assert {line["policy"] for line in agent1} == {"fallback"}
    assert all(line["parse_failure"] for line in agent1)  # the model's failure is still counted
    assert {line["action"] for line in agent1} != {"look_left"}  # the explorer moves, it does not only scan
    assert summary["per_agent"]["Agent1"]["fallback_steps"] == 5
    assert summary["per_agent"]["Agent2"]["fallback_steps"] == 0
    assert summary["fallback_steps"] == 5 and summary["fallback"] == "offline"
    assert summary["llm"]["parse_failures"] == 5


def test_without_fallback_a_failed_step_scans(tmp_path, embedder):
    with ChatServer(lambda request: "no idea") as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base, steps=2)
    assert {line["policy"] for line in trace} == {MODEL}
    assert summary["fallback_steps"] == 0 and summary["fallback"] == "scan"
