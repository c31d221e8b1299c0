"""--export-sft: the runs' decisions as chat examples (explorer/report/training_data.py), and the built-in
explorer choosing goals as a model would (explorer/policies/explorer_goals.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import jsonschema
import pytest

from explorer.policies.explorer_goals import _explorer_choice
from explorer.policies.grid_map import KEEP_SHARE, Goal
from explorer.records.run_files import TraceLines
from explorer.records.run_lock import hold_run_dir
from explorer.testing.chat_server import ChatServer
from tests.support.old_traces import rewrite_trace
from tests.support.optional import needs

MODEL = "openai/test-model"


def run(in_process, run_dir: Path, *args: str, steps: int = 12) -> Path:
    result = in_process.run(
        "--agents", "2", "--steps", str(steps), "--run-dir", str(run_dir), "-q", *args
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return run_dir


def export(in_process, out: Path, *args: str):
    return in_process.run("--export-sft", *args, "--out", str(out))


def examples(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def decisions(run_dir: Path) -> list[dict]:
    """The trace's lines a policy decided with a prompt: those the export makes an example of."""
    return [
        line
        for line in list(TraceLines(run_dir / "trace.jsonl"))
        if line["prompt"] and line["decision"] and line["policy"] != "planner"
    ]


def goal_reply(request: dict) -> str:
    """A model under --decide goals that picks the second goal (the first where only one is listed)."""
    prompt = request["messages"][-1]["content"]
    goal = "G2" if "- G2: " in prompt else "G1"
    return json.dumps({"goal": goal, "message_to": "all", "message_to_others": "", "reason": f"picked {goal}"})


def test_every_decision_of_offline_and_model_runs_is_an_example_whose_reply_meets_its_schema(in_process, tmp_path):
    offline = run(in_process, tmp_path / "offline")
    offline_goals = run(in_process, tmp_path / "offline-goals", "--decide", "goals", "--no-comm")
    with ChatServer(goal_reply) as server:
        model_goals = run(
            in_process, tmp_path / "model-goals", "--decide", "goals", "--model", MODEL, "--api-base", server.api_base
        )
    out = tmp_path / "sft.jsonl"
    result = export(in_process, out, str(offline), str(offline_goals), str(model_goals))
    assert result.returncode == 0, result.stderr
    written = examples(out)
    runs = {run_dir: decisions(run_dir) for run_dir in (offline, offline_goals, model_goals)}
    assert f"Wrote {len(written)} examples from 3 runs to {out}" in result.stdout
    # One example per decision, in each run, with the prompt the trace recorded, as the model saw it.
    for run_dir, lines in runs.items():
        mine = [e for e in written if e["run"] == str(run_dir)]
        assert lines and len(mine) == len(lines)
        prompts = {(line["agent_id"], line["step"]): line["prompt"] for line in lines}
        assert all(e["messages"][0] == {"role": "user", "content": prompts[e["agent"], e["step"]]} for e in mine)
    for example in written:
        reply = json.loads(example["messages"][1]["content"])
        jsonschema.validate(reply, json.loads(example["schema"]))
        assert example["messages"][1]["role"] == "assistant"
    by_run = {
        run_dir: [json.loads(e["messages"][1]["content"]) for e in written if e["run"] == str(run_dir)]
        for run_dir in runs
    }
    # The offline explorer's actions; under --decide goals its choice of goal (no messages: no recipient asked);
    # the model's own goal, as it replied.
    assert all(r["action"] == line["action"] for r, line in zip(by_run[offline], runs[offline]))
    assert all(set(r) == {"goal", "reason"} for r in by_run[offline_goals])
    assert {r["goal"] for r in by_run[model_goals]} <= {"G1", "G2"} and "G2" in {r["goal"] for r in by_run[model_goals]}
    assert all(e["policy"] == MODEL and e["decide"] == "goals" for e in written if e["run"] == str(model_goals))


def test_the_export_loads_with_datasets(in_process, tmp_path):
    needs("datasets", "test")
    import datasets

    out = tmp_path / "sft.jsonl"
    offline = run(in_process, tmp_path / "offline", steps=6)
    goals = run(in_process, tmp_path / "goals", "--decide", "goals", steps=6)
    assert export(in_process, out, str(offline), str(goals)).returncode == 0
    loaded = datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == len(examples(out)) > 0
    assert [m["role"] for m in loaded[0]["messages"]] == ["user", "assistant"]
    assert set(loaded.column_names) == {"messages", "schema", "run", "agent", "step", "policy", "decide"}


def test_the_explorer_keeps_its_goal_while_it_is_worth_enough_of_the_best_else_takes_the_best():
    def goal(x: int, gain: float) -> Goal:
        return Goal((x, 0, 0, "north", 0), gain=gain, new_cells=int(gain), cost=1.0, steps=1, first_action="forward")

    best, close, far = goal(1, 10), goal(2, 10 * KEEP_SHARE), goal(3, 10 * KEEP_SHARE - 1)
    assert _explorer_choice([best, close, far], close) == 2
    assert _explorer_choice([best, close, far], far) == 1
    assert _explorer_choice([best, close], None) == 1
    assert _explorer_choice([best, close], far) == 1  # not among the goals listed


def test_the_filters_keep_the_decisions_that_found_something_and_the_runs_that_reached_90_percent(in_process, tmp_path):
    reached = run(in_process, tmp_path / "reached", steps=15)
    short = run(in_process, tmp_path / "short", steps=3)
    assert json.loads((reached / "summary.json").read_text())["team"]["steps_to_objects"]["90%"] is not None
    assert json.loads((short / "summary.json").read_text())["team"]["steps_to_objects"]["90%"] is None
    out = tmp_path / "found.jsonl"
    result = export(in_process, out, str(reached), str(short), "--only-found-new", "--only-reached")
    assert result.returncode == 0, result.stderr
    finding = [line for line in decisions(reached) if line["new_objects"]]
    assert 0 < len(finding) < len(decisions(reached))
    written = examples(out)
    assert [(e["agent"], e["step"]) for e in written] == [(line["agent_id"], line["step"]) for line in finding]
    assert "Wrote" in result.stdout and "from 1 run to" in result.stdout and "left out: 1 run," in result.stdout


def test_a_goal_found_something_where_the_walk_the_planner_made_to_it_did(in_process, tmp_path):
    goals = run(in_process, tmp_path / "goals", "--decide", "goals", steps=15)
    out = tmp_path / "found.jsonl"
    assert export(in_process, out, str(goals), "--only-found-new").returncode == 0
    trace = list(TraceLines(goals / "trace.jsonl"))
    found = set()
    for agent in ("Agent1", "Agent2"):
        mine = [line for line in trace if line["agent_id"] == agent]
        asks = [n for n, line in enumerate(mine) if line["policy"] != "planner"] + [len(mine)]
        found |= {
            (agent, mine[start]["step"])
            for start, end in itertools.pairwise(asks)
            if any(line["new_objects"] for line in mine[start:end])
        }
    assert found and {(e["agent"], e["step"]) for e in examples(out)} == found
    assert len(found) < len(decisions(goals))  # some goals found nothing new


@pytest.mark.parametrize("damage", ["not a run", "damaged line", "run going", "out exists"])
def test_a_directory_that_is_no_run_or_a_damaged_trace_is_refused_in_one_line(in_process, tmp_path, damage):
    good = run(in_process, tmp_path / "good", steps=3)
    out = tmp_path / "sft.jsonl"
    given = good
    if damage == "not a run":
        given = tmp_path / "elsewhere"
        given.mkdir()
        expected = f"{given} is not a run directory: it has no config.json or trace.jsonl"
    elif damage == "damaged line":
        lines = (good / "trace.jsonl").read_text().splitlines(keepends=True)
        (good / "trace.jsonl").write_text("".join(lines[:2]) + '{"agent_id": "Agent1", "step": \n' + "".join(lines[2:]))
        expected = f"{good / 'trace.jsonl'} is damaged at line 3"
    elif damage == "run going":
        lock = hold_run_dir(good)  # as its run holds it
        expected = f"{good} is a run still going: export it once it has ended"
    else:
        out.write_text("kept\n")
        expected = f"--out {out}: the file is there already"
    result = export(in_process, out, str(good), str(given))
    if damage == "run going":
        lock.release()
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr
    # Nothing half-written is left, and a file that was there is kept.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("sft")) == (
        ["sft.jsonl"] if damage == "out exists" else []
    )
    if damage == "out exists":
        assert out.read_text() == "kept\n"


# ---- issue 63: only examples that meet their schema ---------------------------------------------


def test_an_example_off_its_schema_is_skipped_counted_and_named(in_process, tmp_path):
    offline = run(in_process, tmp_path / "offline", steps=6)
    lines = decisions(offline)
    stray, unknown = (lines[0]["agent_id"], lines[0]["step"]), (lines[1]["agent_id"], lines[1]["step"])

    def off_schema(line):  # an action the prompt did not offer; a recipient not of the team
        if (line["agent_id"], line["step"]) == stray:
            line["decision"]["action"] = "fly"
        if (line["agent_id"], line["step"]) == unknown:
            line["decision"] |= {"message_to": "Agent9", "message_to_others": "here"}
        return line

    rewrite_trace(offline, off_schema)
    out = tmp_path / "sft.jsonl"
    result = export(in_process, out, str(offline))
    assert result.returncode == 0, result.stderr
    written = examples(out)
    assert len(written) == len(lines) - 2
    assert {(e["agent"], e["step"]) for e in written}.isdisjoint({stray, unknown})
    for example in written:
        jsonschema.validate(json.loads(example["messages"][1]["content"]), json.loads(example["schema"]))
    (warning,) = result.stderr.splitlines()
    assert warning.startswith("main.py: warning: --export-sft skipped 2 decisions whose reply is not an instance")
    assert f"{offline} {stray[0]} step {stray[1]}" in warning and f"{offline} {unknown[0]} step {unknown[1]}" in warning


@pytest.mark.parametrize(("decide", "section"), [("actions", "## Available actions"), ("goals", "## Goals you can")])
def test_a_prompt_without_the_section_its_schema_is_rebuilt_from_is_refused_in_one_line(
    in_process, tmp_path, decide, section
):
    given = run(in_process, tmp_path / "run", "--decide", decide, steps=4)
    first = decisions(given)[0]
    rewrite_trace(given, lambda line: {**line, "prompt": line["prompt"].replace(section, "## Something else")})
    out = tmp_path / "sft.jsonl"
    result = export(in_process, out, str(given))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert (
        f"--export-sft: {given}: the prompt of {first['agent_id']} at step {first['step']} has no '{section}"
        in result.stderr
    )
    assert not out.exists()
