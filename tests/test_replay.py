"""--replay-replies: a model run again from the replies its trace recorded, with no model and no key."""

import json
import re
import shutil
import subprocess
import sys
import threading

import pytest
from PIL import Image

from explorer.config.run_config import RunConfig
from explorer.model.client import LLMSettings
from explorer.model.replay import RecordedReplies
from explorer.model.vision import make_vision
from explorer.records.run_files import TraceLines
from explorer.records.trace import TIMING_FIELDS
from explorer.run.runner import ExplorationRun
from explorer.run.stop import RunFailed
from explorer.testing.chat_server import ChatServer, error
from nodes.interfaces import StopRun
from tests.support.old_traces import as_version_1
from tests.support.paths import ROOT, WORLDS

MODEL = "openai/test-model"
RUN = {"agents": 2, "steps": 6, "model": MODEL}
# What a replay's calls cost, in time and money, is not what the recorded calls cost.
CALL_COSTS = ("latency", "retries", "cost_usd", "replayed")
RUN_COSTS = ("wall_seconds", "startup", "store")
LLM_COSTS = ("latency_seconds", "cost_usd", "retries", "replayed_calls")
ACTIONS = ("forward", "look_left", "forward", "look_right")


def decision(action, said=""):
    return f"```yaml\nthinking: scripted\naction: {action}\nreason: test\nmessage_to_others: {json.dumps(said)}\n```"


def scripted(request):
    """A decision for each (agent, step), and the misbehaviour a replay must give back as it came:
    a bad reply re-prompted once to good effect, two bad replies (a parse failure), a call that fails,
    and an empty reply, retried once, that stays empty."""
    prompt = request["messages"][-1]["content"]
    agent = re.search(r"You are (Agent\d+)", prompt).group(1)
    step = int(re.search(r"## Step (\d+) of", prompt).group(1))
    reprompt = "Your previous reply could not be used" in prompt
    if (agent, step) == ("Agent1", 2):
        return decision("look_left", "fixed it") if reprompt else "action: fly"
    if (agent, step) == ("Agent2", 3):
        return "I'm sorry, but I can't help with that."
    if (agent, step) == ("Agent1", 4):
        return error(404, "no such model today")
    if (agent, step) == ("Agent2", 5):
        return ""
    return decision(ACTIONS[(step + int(agent[-1])) % len(ACTIONS)], f"{agent} at step {step}")


def run(run_dir, embedder, **settings):
    config = RunConfig.of(run_dir=run_dir, verbosity=-1, **{**RUN, **settings}).check()
    summary = ExplorationRun(config, embedder=embedder).execute()
    return list(TraceLines(run_dir / "trace.jsonl")), summary


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, embedder):
    """(run directory, trace, summary) of a model run against the stub server."""
    run_dir = tmp_path_factory.mktemp("replay") / "recorded"
    with ChatServer(scripted) as server:
        trace, summary = run(run_dir, embedder, api_base=server.api_base)
    return run_dir, trace, summary


@pytest.fixture
def no_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def comparable(trace, keep_format=True):
    """The trace but for what a replay cannot repeat: timings, and the time and money each call took;
    without `keep_format`, each call's reply format read as YAML, and without the schema's dialect and the
    finish reason, which version 1 kept neither."""
    lines = []
    for line in trace:
        calls = [{k: v for k, v in call.items() if k not in CALL_COSTS} for call in line["llm"]["calls"]]
        if not keep_format:
            calls = [{**call, "format": "yaml"} for call in calls]
            calls = [{k: v for k, v in call.items() if k not in ("dialect", "finish_reason")} for call in calls]
        lines.append({**{k: v for k, v in line.items() if k not in TIMING_FIELDS}, "llm": {"calls": calls}})
    return lines


def metrics(summary, keep_format=True):
    """The summary but for run times and what the calls cost; without `keep_format`, the calls per
    reply format left out."""
    dropped = LLM_COSTS if keep_format else (*LLM_COSTS, "json_calls", "yaml_calls")
    kept = {k: v for k, v in summary.items() if k not in RUN_COSTS}
    kept["llm"] = {k: v for k, v in summary["llm"].items() if k not in dropped}
    kept["per_agent"] = {
        agent: {**figures, "llm": {k: v for k, v in figures["llm"].items() if k not in dropped}}
        for agent, figures in summary["per_agent"].items()
    }
    return kept


def copy_of(recorded, tmp_path, change):
    """A copy of the recorded run whose trace lines are `change(lines)`."""
    run_dir = tmp_path / "changed"
    shutil.copytree(recorded[0], run_dir)
    lines = change(list(TraceLines(run_dir / "trace.jsonl")))
    (run_dir / "trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run_dir


def line_of(trace, agent, step):
    return next(line for line in trace if line["agent_id"] == agent and line["step"] == step)


# ---- the same run, again ------------------------------------------------------------------------


def test_the_recording_holds_every_kind_of_call_a_replay_must_give_back(recorded):
    _, trace, summary = recorded
    reprompted = line_of(trace, "Agent1", 2)
    assert (
        len(reprompted["llm"]["calls"]) == 2 and not reprompted["parse_failure"] and reprompted["action"] == "look_left"
    )
    assert line_of(trace, "Agent2", 3)["parse_failure"]
    assert [c["error"] for c in line_of(trace, "Agent1", 4)["llm"]["calls"]] == ["not_found"]
    assert [c["error"] for c in line_of(trace, "Agent2", 5)["llm"]["calls"]] == ["bad_response"]
    assert summary["status"] == "completed" and summary["llm"]["replayed_calls"] == 0


def test_a_replay_gives_the_recorded_run_and_asks_no_model(recorded, tmp_path, embedder, no_api_key):
    run_dir, trace, summary = recorded
    with ChatServer(lambda request: error(500)) as server:  # were it asked, every call would fail
        replayed, replay_summary = run(tmp_path / "replay", embedder, api_base=server.api_base, replay_replies=run_dir)
    assert server.requests == []
    assert comparable(replayed) == comparable(trace)
    assert metrics(replay_summary) == metrics(summary)
    calls = [call for line in replayed for call in line["llm"]["calls"]]
    assert calls and all(call["replayed"] and call["latency"] == 0 and call["cost_usd"] == 0 for call in calls)
    llm = replay_summary["llm"]
    assert llm["calls"] == llm["replayed_calls"] == summary["llm"]["calls"] == len(calls)
    assert replay_summary["llm"]["prompt_tokens"] == summary["llm"]["prompt_tokens"] > 0


def test_a_replay_needs_no_server_and_no_api_key(recorded, tmp_path, embedder, no_api_key):
    run_dir, trace, _ = recorded
    # Without --api-base, openai/... needs OPENAI_API_KEY: a run that asks the model is refused at start.
    replayed, summary = run(tmp_path / "replay", embedder, replay_replies=run_dir)
    assert summary["status"] == "completed"
    assert comparable(replayed) == comparable(trace)


# ---- what a replay refuses ----------------------------------------------------------------------


def test_other_arguments_stop_the_replay_at_the_first_prompt_that_differs(recorded, tmp_path, no_api_key):
    run_dir = tmp_path / "replay"
    process = subprocess.run(
        [
            sys.executable,
            str(ROOT / "main.py"),
            "--mode",
            "mock",
            "--agents",
            "2",
            "--steps",
            "6",
            "--model",
            MODEL,
            "--no-comm",
            "--replay-replies",
            str(recorded[0]),
            "--run-dir",
            str(run_dir),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 2, process.stderr
    [line] = process.stderr.strip().splitlines()
    assert re.match(
        rf"main\.py: error: --replay-replies {re.escape(str(recorded[0]))}: Agent[12]'s prompt at step 1 differs from "
        r"the recorded one \(first difference at character \d+\): recorded .+, now .+",
        line,
    ), line
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "failed"


def test_a_prompt_that_differs_later_is_named_with_its_step_and_the_steps_before_are_kept(
    recorded,
    tmp_path,
    embedder,
    no_api_key,
):
    def change(lines):
        line = line_of(lines, "Agent2", 4)
        line["prompt"] = line["prompt"].replace("## Step 4 of 6", "## Step 4 of 66")
        return lines

    changed = copy_of(recorded, tmp_path, change)
    at = line_of(recorded[1], "Agent2", 4)["prompt"].index("## Step 4 of 6") + len("## Step 4 of 6")
    with pytest.raises(RunFailed) as failed:
        run(tmp_path / "replay", embedder, replay_replies=changed)
    assert failed.value.users_mistake
    assert (
        f"Agent2's prompt at step 4 differs from the recorded one (first difference at character {at}): "
        "recorded '6\\n" in str(failed.value)
    )
    replayed = list(TraceLines(tmp_path / "replay" / "trace.jsonl"))
    before = [line for line in recorded[1] if line["step"] < 4]
    assert comparable([line for line in replayed if line["step"] < 4]) == comparable(before)
    assert not [line for line in replayed if line["agent_id"] == "Agent2" and line["step"] >= 4]


def test_running_out_of_recorded_replies_stops_the_replay(recorded, tmp_path, embedder, no_api_key):
    changed = copy_of(recorded, tmp_path, lambda lines: [line for line in lines if line["step"] <= 3])
    with pytest.raises(RunFailed) as failed:
        run(tmp_path / "replay", embedder, replay_replies=changed)
    assert failed.value.users_mistake
    assert re.search(
        r"Agent[12] makes a model call the recorded run did not make \(its record ends at step 3\)", str(failed.value)
    )
    assert len([line for line in list(TraceLines(tmp_path / "replay" / "trace.jsonl")) if line["step"] <= 3]) == 6


def test_a_reply_the_trace_kept_only_the_start_of_is_refused(tmp_path, embedder, no_api_key):
    long_reply = decision("forward") + "\n" + "x" * 5_000  # the prose after the block is not read
    with ChatServer(lambda request: long_reply) as server:
        run(tmp_path / "recorded", embedder, agents=1, steps=2, api_base=server.api_base)
    with pytest.raises(RunFailed) as failed:
        run(tmp_path / "replay", embedder, agents=1, steps=2, replay_replies=tmp_path / "recorded")
    assert (
        f"Agent1's reply at step 1 cannot be replayed: the trace kept only the start of its {len(long_reply):,} "
        "characters" in str(failed.value)
    )


def test_a_vision_call_is_refused_naming_the_agent_and_step(tmp_path):
    call = {
        "purpose": "vision",
        "model": MODEL,
        "prompt_tokens": 9,
        "completion_tokens": 9,
        "latency": 1.0,
        "retries": 0,
        "cost_usd": None,
        "error": None,
    }
    line = {"agent_id": "Agent1", "step": 1, "prompt": "", "attempts": [], "errors": [], "llm": {"calls": [call]}}
    (tmp_path / "trace.jsonl").write_text(json.dumps(line) + "\n")
    image = tmp_path / "view.png"
    Image.new("RGB", (4, 3), (200, 30, 30)).save(image)
    look = make_vision(LLMSettings(MODEL, replay=RecordedReplies(tmp_path, "Agent1")))
    with pytest.raises(StopRun) as stopped:
        look(image)
    assert stopped.value.users_mistake
    assert str(stopped.value) == (
        f"--replay-replies {tmp_path}: Agent1's vision call at step 1 cannot be replayed: "
        "the trace does not keep the screenshot the model saw"
    )


# ---- traces of other versions -------------------------------------------------------------------


def test_a_version_1_trace_is_replayed_as_it_was_recorded(recorded, tmp_path, embedder, no_api_key):
    _, trace, summary = recorded
    old = copy_of(recorded, tmp_path, lambda lines: [as_version_1(line) for line in lines])
    assert "attempts" in json.loads((old / "trace.jsonl").read_text().splitlines()[0])  # as written
    replayed, replay_summary = run(tmp_path / "replay", embedder, replay_replies=old)
    # Version 1 kept no reply format: its calls read as YAML, as every call then was.
    assert comparable(replayed) == comparable(trace, keep_format=False)
    assert metrics(replay_summary, keep_format=False) == metrics(summary, keep_format=False)


def test_a_trace_of_an_unknown_version_is_refused_in_one_line_naming_it(recorded, tmp_path, embedder, no_api_key):
    future = copy_of(recorded, tmp_path, lambda lines: [{**line, "trace_version": 99} for line in lines])
    with pytest.raises(RunFailed) as failed:
        run(tmp_path / "replay", embedder, replay_replies=future)
    assert failed.value.users_mistake and "\n" not in str(failed.value)
    assert (
        f"--replay-replies {future}: {future / 'trace.jsonl'}: trace_version 99 is not one this program reads "
        "(versions 1 to 2)" in str(failed.value)
    )


# ---- goals and a coordinator --------------------------------------------------------------------


def test_goal_decisions_and_a_model_coordinator_replay_too(tmp_path, embedder, no_api_key):
    coordinator_asked, lock = [], threading.Lock()

    def answer(request):
        prompt = request["messages"][-1]["content"]
        if "You are the Coordinator" in prompt:
            with lock:
                coordinator_asked.append(prompt)
                first = len(coordinator_asked) == 1
            return "no idea" if first else "```yaml\ndirectives:\n  Agent1: {goal: [1, 1, 0]}\n```"
        return "```yaml\ngoal: G1\nreason: the nearest\n```"

    settings = {
        "agents": 2,
        "steps": 10,
        "world": WORLDS / "office.yaml",
        "decide": "goals",
        "coordinator": "openai/coordinator-model",
        "schedule": "event",
    }
    with ChatServer(answer) as server:
        trace, summary = run(tmp_path / "recorded", embedder, api_base=server.api_base, **settings)
    coordinator = [line for line in trace if line["agent_id"] == "Coordinator" and line["llm"]["calls"]]
    assert coordinator and len(coordinator[0]["llm"]["calls"]) == 2  # re-prompted
    assert summary["planner_steps"] > 0  # steps that asked no model

    replayed, _ = run(tmp_path / "replay", embedder, replay_replies=tmp_path / "recorded", **settings)
    assert comparable(replayed) == comparable(trace)
