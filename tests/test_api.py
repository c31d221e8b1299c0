"""The Python API (explorer/api.py) and policy plug-ins (`--model package.module:Class`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
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
from nodes.record import ModelCall
from tests.support.paths import ROOT

PROGRAM_SECONDS = 120  # a run that hangs, or will not stop, fails its test after this


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


class CountsGarbage(TurnRight):
    def decide(self, prompt, context):
        return DecisionOutcome(Decision(action="look_right"), model_calls=("garbage",))


class CountsBadly(TurnRight):
    def decide(self, prompt, context):
        call = ModelCall("decision", "my-model", "yaml", prompt_tokens=-5)
        return DecisionOutcome(Decision(action="look_right"), model_calls=(call,))


class CountsNothing(TurnRight):
    def decide(self, prompt, context):
        return DecisionOutcome(Decision(action="look_right"), model_calls=5)


class ReadsNothing(TurnRight):
    reads_memories = False


class ReadsMaybe(TurnRight):
    reads_memories = "no"


class WritesToNobody(TurnRight):
    def decide(self, prompt, context):
        return DecisionOutcome(Decision(action="look_right", message_to_others="hello", message_to="Agent9"))


class ExitsAtItsSecondStep(TurnRight):
    def decide(self, prompt, context):
        if self.setup.agent_id == "Agent2" and context.team.step == 2:
            sys.exit(3)
        return super().decide(prompt, context)


class AlwaysExits(TurnRight):
    def decide(self, prompt, context):
        sys.exit()


class Interrupts(TurnRight):
    def decide(self, prompt, context):
        if context.team.step == 2:
            raise KeyboardInterrupt
        return super().decide(prompt, context)


class NeverAnswersFromStep3(TurnRight):
    """From step 3 on, its decide blocks for ever, as a network call with no timeout does."""

    def decide(self, prompt, context):
        if context.team.step >= 3:
            threading.Event().wait()
        return super().decide(prompt, context)


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


# Issue 50, defect 14: these ran with the wrong settings, or failed later with a raw TypeError or AttributeError.
@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"comm": "false"}, "unknown --comm 'false': choose one of all, star, tree, none"),
        ({"agents": 2.5}, "agents must be a whole number, not 2.5"),
        ({"agents": True}, "agents must be a whole number, not True"),
        ({"steps": 2.5}, "steps must be a whole number or None, not 2.5"),
        ({"steps": [1]}, "steps must be a whole number or None, not [1]"),
        ({"seed": 1.5}, "seed must be a whole number, not 1.5"),
        ({"world": 123}, "world must be a path, not 123"),
        ({"run_dir": 5}, "run_dir must be a path or None, not 5"),
        ({"model": None}, "model must be text, not None"),
        ({"profiles": {"default": {}}}, "profiles must be a path or None, not {'default': {}}"),
        ({"timeout": False}, "timeout must be a number, not False"),
        ({"find": 5}, "find must be a list of text, not 5"),
        ({"find": ["laptop", " "]}, "--find: ' ' is not a list of objects such as toothbrush,laptop"),
        ({"verbosity": 2}, "verbosity must be -1 (quiet), 0 or 1 (verbose), not 2"),
        ({"mode": "unity", "window_titles": "x", "regions": [(0, 0, 1, 1)]}, "--region: '0,0,1,1': X and Y must"),
    ],
)
def test_an_option_of_the_wrong_kind_from_python_is_a_config_error_naming_it(options, problem):
    with pytest.raises(ConfigError) as raised:
        make_config(**options)
    assert str(raised.value).startswith(problem)


def test_values_of_their_fields_types_are_read_as_their_text_is():
    given = make_config(agents=np.int64(3), timeout=5, world=Path("office"), find=["printer"], seed=np.int32(7))
    assert (given.team.agents, given.calls.timeout, given.episode.seed, given.episode.find) == (3, 5.0, 7, ("printer",))
    assert type(given.team.agents) is int and type(given.calls.timeout) is float and type(given.episode.seed) is int
    assert given == make_config(agents="3", timeout="5", world="office", find="printer", seed="7")


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
        ("CountsGarbage", "decide returned model_calls whose item 1 is a str, not a ModelCall"),
        ("CountsBadly", "decide returned model_calls whose item 1 has prompt_tokens -5, not a whole number, 0 or more"),
        ("CountsNothing", "decide returned model_calls of type int, not a tuple of ModelCall"),
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


def start(*args: str) -> subprocess.Popen[str]:
    """main.py ARGS in a process of its own, from the checkout (where tests.test_api is found)."""
    return subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        # A harness may start us with SIGINT ignored, which children inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def ended(process: subprocess.Popen[str], signum: int | None = None) -> tuple[str, str]:
    """(stdout, stderr) once the process has ended, after `signum` if given; killed if it has not within
    PROGRAM_SECONDS, failing the test."""
    try:
        if signum is not None:
            process.send_signal(signum)
        return process.communicate(timeout=PROGRAM_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("policy", "raised"),
    [
        ("ExitsAtItsSecondStep", "SystemExit(3) at Agent2's step 2"),
        ("AlwaysExits", "SystemExit() at Agent"),
        ("Interrupts", "KeyboardInterrupt() at Agent"),
    ],
)
def test_a_plug_in_that_exits_or_interrupts_fails_the_run_in_one_line(tmp_path, policy, raised):
    run_dir, model = tmp_path / "run", f"tests.test_api:{policy}"
    process = start("--model", model, "--agents", "2", "--steps", "4", "--run-dir", str(run_dir), "-q")
    stdout, stderr = ended(process)
    assert process.returncode == 1, stderr
    [line] = stderr.strip().splitlines()
    assert line.startswith(f"main.py: error: --model {model}: decide raised {raised}")
    assert "Traceback" not in stdout + stderr
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "failed"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_signal_stops_a_run_whose_plug_in_never_answers(tmp_path, signum):
    run_dir = tmp_path / "run"
    args = ("--model", "tests.test_api:NeverAnswersFromStep3", "--agents", "2", "--steps", "6")
    process = start(*args, "--run-dir", str(run_dir), "-q")
    trace = run_dir / "trace.jsonl"
    deadline = time.monotonic() + PROGRAM_SECONDS
    while time.monotonic() < deadline and (not trace.exists() or len(trace.read_text().splitlines()) < 4):
        time.sleep(0.1)  # the second round is committed: both agents are in step 3's decide, or about to be
    stdout, stderr = ended(process, signum)
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stdout + stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] == {"Agent1": 2, "Agent2": 2}
    assert len(trace_lines(run_dir)) == 4  # the steps finished; the one in flight is not committed
    for agent_id in ("Agent1", "Agent2"):
        assert json.loads((run_dir / "memory" / agent_id / "meta.json").read_text())["count"] == 2


def test_a_decide_past_the_timeout_fails_its_step_and_the_run_goes_on(tmp_path):
    run_dir = tmp_path / "run"
    args = ("--model", "tests.test_api:NeverAnswersFromStep3", "--agents", "2", "--steps", "4", "--timeout", "1")
    process = start(*args, "--run-dir", str(run_dir), "-q")
    _stdout, stderr = ended(process)
    assert process.returncode == 0, stderr
    lines = trace_lines(run_dir)
    assert len(lines) == 8
    for line in lines:
        late = line["step"] >= 3  # each later call waits for the one abandoned, and is abandoned in turn
        assert line["errors"] == (
            ["decision failed: decide gave no answer within --timeout 1 s: abandoned"] if late else []
        )
        assert (line["decision"] is None) == late
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed"
    assert {agent: figures["llm"]["errors"] for agent, figures in summary["per_agent"].items()} == {
        "Agent1": 2,
        "Agent2": 2,
    }


def documented_fields(heading: str) -> list[tuple[str, str]]:
    """(field, type) of the table under `### `heading`` in docs/python.md, in order."""
    text = (ROOT / "docs" / "python.md").read_text()
    start = text.index(f"### `{heading}`\n")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) == 3:
            rows.append((cells[0].strip("`"), cells[1].strip("`").replace("\\|", "|")))
    return rows


def test_the_records_a_policy_is_given_are_documented_field_by_field():
    import dataclasses

    from nodes.decision_context import AgentSetup, TeamContext, Teammates, View

    for record in (PolicySetup, DecisionContext, TeamContext, AgentSetup, View, Teammates):
        fields = [(field.name, str(field.type)) for field in dataclasses.fields(record)]
        assert documented_fields(record.__name__) == fields, f"docs/python.md's {record.__name__} table"
