"""A reply's message or reason that gives back the prompt's own instructions: left out of the decision, counted in
the trace and the summary, and kept out of --export-sft (explorer/policies/echoes.py)."""

import json
from pathlib import Path

import pytest

from explorer.model.client import Reply
from explorer.policies.echoes import repeats_instructions, without_echoes
from explorer.policies.model_policy import ModelPolicy
from explorer.records.run_files import TraceLines
from explorer.testing.chat_server import ChatServer
from nodes.decision_context import action_choice, render_prompt
from nodes.interfaces import Decision
from prompts import JSON, instruction_text
from tests.test_prompt_budget import context

BASE = context(3, 2, 1, 50, 40)
INSTRUCTIONS = instruction_text(render_prompt(BASE, action_choice(BASE, JSON)))
OLDER = 'Reply with YAML only:\nreason: "why this action"\nmessage_to_others: "optional: something useful for the team"'


@pytest.mark.parametrize(
    "text, instructions, echoed",
    [
        ("your message, in your own words", INSTRUCTIONS, True),  # the field's description
        ("your_message", INSTRUCTIONS, True),  # its head as a name (SmolLM2 behind llama-server)
        ("to find as many distinct objects as possible", INSTRUCTIONS, True),  # the team's goal
        ("Heading to (9, 2, 0) facing east.", INSTRUCTIONS, True),  # the example sentence, word for word
        ("optional: something useful for the team, such as G2, Agent3,", OLDER, True),  # an older prompt's value
        ("why this action", OLDER, True),
        ("Heading to (4, 6, 0) facing east.", INSTRUCTIONS, False),  # the example's form, with its own place
        ("Found the lamp by the west door; the hall beyond is open", INSTRUCTIONS, False),
        ("no teammate near", INSTRUCTIONS, False),
        ("heading north", INSTRUCTIONS, False),  # two words of its own
        ("lamp found", INSTRUCTIONS, False),
        ("unseen ground to the north", INSTRUCTIONS, False),  # "to the north" is the prompt's too, but not most of it
        ("all", INSTRUCTIONS, False),  # too short to tell
        ("", INSTRUCTIONS, False),
    ],
)
def test_a_text_is_an_echo_when_most_of_it_runs_as_the_instructions_do(text, instructions, echoed):
    assert repeats_instructions(text, instructions) is echoed


def test_an_echo_is_left_out_and_named_and_a_message_left_out_goes_to_no_one():
    said = Decision(
        "forward",
        reason="your message, in your own words",
        message_to_others="why you chose it, in a few words of your own",
        message_to="Agent2",
    )
    kept, echoed = without_echoes(said, INSTRUCTIONS)
    assert echoed == ("message_to_others", "reason")
    assert (kept.action, kept.reason, kept.message_to_others, kept.message_to) == ("forward", "", "", "all")
    mine = Decision("forward", reason="the hall north is unseen", message_to_others="Lamp at (2, 2, 0).")
    assert without_echoes(mine, INSTRUCTIONS) == (mine, ())


def test_the_model_policy_leaves_an_echo_out_and_its_call_says_which():
    reply = json.dumps(
        {
            "action": "forward",
            "message_to": "Agent2",
            "message_to_others": "Lamp at (2, 2, 0).",
            "reason": "why you chose it, in a few words of your own",
        }
    )
    policy = ModelPolicy("stub", lambda prompt, schema=None: Reply(reply, "stub", format="json"), constrained=True)
    outcome = policy.decide("", BASE)
    assert outcome.decision is not None
    assert (outcome.decision.reason, outcome.decision.message_to_others) == ("", "Lamp at (2, 2, 0).")
    [call] = outcome.model_calls
    assert call.echoed == ("reason",) and call.to_dict()["echoed"] == ["reason"]


def echoing(request):
    return json.dumps(
        {
            "action": "forward",
            "message_to": "all",
            "message_to_others": "your message, in your own words",
            "reason": "open ground ahead",
        }
    )


def model_run(in_process, run_dir: Path, answer, agents: int) -> Path:
    """A run of `agents` agents for two steps, its model answering with `answer(request)`."""
    with ChatServer(answer) as server:
        result = in_process.run(
            "--agents", str(agents), "--steps", "2", "--run-dir", str(run_dir), "-q", "--model", "openai/test-model",
            "--api-base", server.api_base,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return run_dir


def test_a_run_counts_its_echoes_and_sends_none_of_them(in_process, tmp_path):
    run_dir = model_run(in_process, tmp_path / "run", echoing, agents=1)
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [call["echoed"] for line in trace for call in line["llm"]["calls"]] == [["message_to_others"]] * 2
    assert all(line["message_out"] is None and line["decision"]["reason"] == "open ground ahead" for line in trace)
    assert summary["llm"]["echoed_fields"] == 2


def test_an_older_runs_echoes_are_kept_out_of_the_training_data(in_process, tmp_path):
    forward = json.dumps({"action": "forward", "reason": "open ground ahead"})
    run_dir = model_run(in_process, tmp_path / "run", lambda request: forward, agents=2)
    # As a run before echoes were left out would have it: a message giving back its prompt's description.
    lines = list(TraceLines(run_dir / "trace.jsonl"))
    lines[0]["decision"].update(message_to_others="your message, in your own words", message_to="Agent2")
    (run_dir / "trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "sft.jsonl"
    exported = in_process.run("--export-sft", str(run_dir), "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    replies = [json.loads(json.loads(line)["messages"][1]["content"]) for line in out.read_text().splitlines()]
    assert len(replies) == 4 and all(
        reply["message_to_others"] == "" and reply["message_to"] == "all" for reply in replies
    )
    assert "Left out 1 text (messages, reasons) that gave back their prompt's instructions" in exported.stdout


def test_the_echoed_fields_of_a_call_survive_the_trace(tmp_path: Path):
    from nodes.record import ModelCall

    call = ModelCall("decision", "m", "json", echoed=("reason",))
    assert ModelCall.from_dict(call.to_dict()) == call
    assert "echoed" not in ModelCall("decision", "m", "json").to_dict()
