"""The Python API (explorer/api.py) and policy plug-ins (`--model package.module:Class`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.api import (
    ConfigError,
    Decision,
    DecisionContext,
    DecisionOutcome,
    PolicySetup,
    make_config,
    run,
)
from explorer.config.command_line import RunParser, config_from
from explorer.policies.plugin import is_plugin


class TurnRight:
    """A plug-in for these tests: turns right at every step, and says which agent and seed it was made for."""

    name = "turn-right"

    def __init__(self, setup: PolicySetup) -> None:
        self.setup = setup

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        return DecisionOutcome(Decision(action="look_right", reason=f"{self.setup.agent_id} {self.setup.seed}"))


class NoDecide:
    name = "nothing"


class Nameless(TurnRight):
    name = ""


class Grumpy(TurnRight):
    def __init__(self, setup: PolicySetup) -> None:
        raise ValueError("will not\nplay")


class AnswersNone(TurnRight):
    def decide(self, prompt, context):
        return None


class SaysNone(TurnRight):
    def decide(self, prompt, context):
        return DecisionOutcome(Decision(action="look_right", message_to_others=None))


class Flies(TurnRight):
    def decide(self, prompt, context):
        return DecisionOutcome(Decision(action="fly"))


class ReadsNothing(TurnRight):
    reads_memories = False


class ReadsMaybe(TurnRight):
    reads_memories = "no"


class WritesToNobody(TurnRight):
    def decide(self, prompt, context):
        return DecisionOutcome(Decision(action="look_right", message_to_others="hello", message_to="Agent9"))


def trace_lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]


def test_options_from_python_are_read_and_checked_as_the_command_lines():
    given = make_config(world="office", steps="12", agents=3, comm=False, max_concurrency=4, world_seed=None)
    arguments = ["--world", "office", "--steps", "12", "--agents", "3", "--no-comm", "--max-concurrency", "4"]
    assert given == config_from(RunParser().parse_args(arguments), verbosity=-1)
    with pytest.raises(ConfigError, match="unknown option 'stepz': the options are mode, agents, steps"):
        make_config(stepz=3)
    with pytest.raises(ConfigError, match="--steps: invalid value 'many'"):
        make_config(steps="many")
    with pytest.raises(ConfigError, match="--agents must be from 1 to 1000, not 0"):
        make_config(agents=0)


def test_a_plug_in_policy_runs_from_python_and_the_summary_comes_back(tmp_path, embedder):
    config = make_config(agents=2, steps=4, seed=5, run_dir=tmp_path / "run")
    result = run(config, policy=TurnRight, embedder=embedder)
    assert result.run_dir == tmp_path / "run" and result.summary["status"] == "completed"
    assert result.summary["model"] == "tests.test_api:TurnRight"
    lines = trace_lines(result.run_dir)
    assert len(lines) == 8 and {line["action"] for line in lines} == {"look_right"}
    assert {line["policy"] for line in lines} == {"turn-right"}
    reasons = {line["agent_id"]: line["decision"]["reason"] for line in lines}
    assert reasons["Agent1"] != reasons["Agent2"] and reasons["Agent1"].startswith("Agent1 ")  # made once per agent
    # Saying nothing of its memories, it is given them, as a model is.
    assert all(line["memory_query"] for line in lines)
    assert all(line["retrieved_memories"] for line in lines if line["step"] > 1)


def test_a_plug_in_that_reads_no_memories_has_none_retrieved_and_keeps_them_all(tmp_path, embedder):
    result = run(make_config(agents=2, steps=4, run_dir=tmp_path / "run"), policy=ReadsNothing, embedder=embedder)
    lines = trace_lines(result.run_dir)
    assert {(line["memory_query"], str(line["retrieved_memories"])) for line in lines} == {("", "[]")}
    for agent_id in ("Agent1", "Agent2"):
        meta = json.loads((result.run_dir / "memory" / agent_id / "meta.json").read_text())
        assert meta["count"] == 4


def test_a_plug_in_policy_runs_from_the_command_line(tmp_path, in_process):
    run_dir = tmp_path / "run"
    assert (
        in_process.run(
            "--model", "tests.test_api:TurnRight", "--steps", "2", "--run-dir", str(run_dir), "-q"
        ).returncode
        == 0
    )
    assert {line["policy"] for line in trace_lines(run_dir)} == {"turn-right"}


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ("tests.no_such_module:Policy", "cannot import tests.no_such_module: ModuleNotFoundError"),
        ("tests.test_api:Missing", "tests.test_api has no Missing"),
        ("tests.test_api:NoDecide", "NoDecide is not a policy class"),
        ("tests.test_api:trace_lines", "trace_lines is not a policy class"),
    ],
)
def test_a_bad_plug_in_is_refused_in_one_line_before_the_run_starts(tmp_path, in_process, model, problem):
    run_dir = tmp_path / "run"
    result = in_process.run("--model", model, "--steps", "2", "--run-dir", str(run_dir))
    assert result.returncode == 2
    error = result.stderr
    assert f"main.py: error: --model {model}: {problem}" in error and len(error.strip().splitlines()) == 1
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("policy", "problem"),
    [
        ("Nameless", "the policy has no `name` (a string; see explorer/api.py)"),
        ("ReadsMaybe", "the policy's `reads_memories` is not True or False (see explorer/api.py)"),
        ("Grumpy", "making the policy failed: ValueError: will not play"),
        ("AnswersNone", "decide returned NoneType, not a DecisionOutcome (see explorer/api.py)"),
        ("SaysNone", "decide returned a Decision whose message_to_others is not a string (see explorer/api.py)"),
        ("Flies", "decide returned the action 'fly', not one of forward, backward, "),
    ],
)
def test_a_plug_in_that_breaks_the_contract_stops_the_run_in_one_line(tmp_path, in_process, policy, problem):
    run_dir = tmp_path / "run"
    model = f"tests.test_api:{policy}"
    result = in_process.run("--model", model, "--steps", "2", "--run-dir", str(run_dir))
    assert result.returncode == 2
    error = result.stderr
    assert error.strip().splitlines()[-1].startswith(f"main.py: error: --model {model}: {problem}")
    assert "Traceback" not in error
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "failed"


def test_a_plug_ins_message_to_someone_not_on_the_team_goes_to_all_with_a_note(tmp_path, in_process):
    run_dir = tmp_path / "run"
    result = in_process.run("--model", "tests.test_api:WritesToNobody", "--steps", "1", "--run-dir", str(run_dir), "-q")
    assert result.returncode == 0
    first = trace_lines(run_dir)[0]
    assert first["message_out"] == {"recipient": "all", "message": "hello"}
    assert first["notes"] == ["message_to 'Agent9' is not a teammate; the message went to all"]


def test_a_plug_in_is_named_so_and_a_model_is_not():
    assert is_plugin("mypolicies:Forward") and is_plugin("my.policies:Outer.Inner")
    for model in ("gpt-4o-mini", "ollama/llama3:8b", "openai/qwen2.5:7b", "bedrock/anthropic.claude-v2:1"):
        assert not is_plugin(model)


def test_a_policy_class_that_cannot_be_named_is_refused(tmp_path):
    class Local(TurnRight):
        pass

    with pytest.raises(ConfigError, match="define the policy class at a module's top level"):
        run(make_config(steps=2, run_dir=tmp_path / "run"), policy=Local)
    assert not (tmp_path / "run").exists()
