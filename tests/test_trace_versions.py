"""Old traces are read as the current version: each model call one record in llm.calls; unknown versions refused."""

import pytest

from explorer.records.trace_versions import TraceVersionError, current_line
from nodes.record import TRACE_VERSION, ModelCall, StepRecord
from tests.support.old_traces import as_version_1

MODEL = "openai/test-model"


def cost(**changes):
    """A version-1 entry of llm.calls: what the call cost, and the kind of failure."""
    return {
        "purpose": "decision",
        "model": MODEL,
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "latency": 0.5,
        "retries": 0,
        "cost_usd": None,
        "error": None,
        **changes,
    }


def version_1_line(calls, attempts, errors):
    return {
        "agent_id": "Agent1",
        "step": 3,
        "prompt": "## Step 3 of 6",
        "attempts": attempts,
        "decision": None,
        "parse_failure": False,
        "errors": errors,
        "llm": {"calls": calls},
    }


def test_a_version_1_line_gets_each_reply_and_failure_back_in_its_call():
    timed_out = "openai/test-model: timeout error: no whole reply within 60 s"
    message = "openai/test-model: server error (HTTP 503) after 2 retries: it's down"
    line = version_1_line(
        [
            cost(purpose="vision", error="timeout"),
            cost(),
            cost(prompt_tokens=0, completion_tokens=0, retries=2, error="server"),
        ],
        [{"reply": "action: fly", "chars": 11, "error": "unknown action 'fly'"}],
        [f"vision failed: {timed_out}", f"decision failed: LLMError({message!r})"],
    )
    upgraded = current_line(line)
    assert upgraded["trace_version"] == TRACE_VERSION == 2 and "attempts" not in upgraded
    assert {k: v for k, v in upgraded.items() if k not in ("trace_version", "llm")} == {
        k: v for k, v in line.items() if k not in ("attempts", "llm")
    }
    vision, bad_reply, failed = (ModelCall.from_dict(call) for call in upgraded["llm"]["calls"])
    tokens = {"prompt_tokens": 100, "completion_tokens": 20, "latency": 0.5}
    assert vision == ModelCall("vision", MODEL, "yaml", **tokens, error="timeout", error_message=timed_out)
    assert bad_reply == ModelCall(
        "decision", MODEL, "yaml", reply="action: fly", chars=11, reply_error="unknown action 'fly'", **tokens
    )
    assert (failed.reply, failed.error, failed.error_message, failed.retries) == (None, "server", message, 2)


def test_a_replayed_call_keeps_its_mark_and_a_call_with_no_reply_on_record_has_none():
    line = version_1_line([cost(replayed=True), cost()], [{"reply": "action: forward", "chars": 15, "error": None}], [])
    first, second = current_line(line)["llm"]["calls"]
    assert first["replayed"] is True and first["reply"] == "action: forward"
    assert "replayed" not in second and second["reply"] is None and second["chars"] is None


def test_a_current_line_is_read_as_it_is_and_written_back_to_version_1_as_it_was():
    record = StepRecord(
        "Agent1",
        2,
        prompt="p",
        model_calls=[
            ModelCall("decision", MODEL, "yaml", reply="no", chars=2, reply_error="the reply has no `action` field"),
            ModelCall("decision", MODEL, "yaml", error="not_found", error_message="gone"),
        ],
        errors=["decision failed: LLMError('gone')"],
    )
    line = record.to_dict()
    assert line["trace_version"] == 2 and current_line(line) is line
    assert current_line(as_version_1(line)) == line
    assert StepRecord.from_dict(line).to_dict() == line


@pytest.mark.parametrize("version", [99, 0, "2"])
def test_a_version_this_program_does_not_know_is_refused_naming_it(version):
    with pytest.raises(TraceVersionError) as refused:
        current_line({"trace_version": version, "agent_id": "Agent1", "step": 1})
    assert str(refused.value) == f"trace_version {version!r} is not one this program reads (versions 1 to 2)"
