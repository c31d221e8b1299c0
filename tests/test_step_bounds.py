"""A step's trace line stays within bounds whatever a policy of the user's own puts in it: each text is cut as
a model reply is, saying its full length, and the trace never holds a line its readers refuse."""

from __future__ import annotations

import json

import pytest

from explorer.api import Decision, DecisionContext, DecisionOutcome, PolicySetup, make_config, run
from explorer.records import trace as trace_module
from explorer.records.trace import DiskWriteError, TraceWriter
from explorer.report.run_report import rebuild_report
from explorer.run.recover import recover_summary
from nodes.record import ITEMS_KEPT, ModelCall, StepRecord

HUGE = 9_000_000  # characters: over the 8,000,000 bytes a trace line may hold, in one text alone
MAX_KEPT_LINE = 1_000_000  # bytes: what a bounded line stays far within


class Floods:
    """Answers with a decision wrapped in texts of 9 million characters, and more notes and calls than are kept."""

    name = "floods"

    def __init__(self, setup: PolicySetup) -> None:
        self.setup = setup

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        call = ModelCall("decision", "m" * HUGE, "yaml", reply="r" * HUGE, error_message="e" * HUGE)
        return DecisionOutcome(
            Decision(action="look_right"),
            prompt="p" * HUGE,
            decided_by="d" * HUGE,
            notes=("n" * HUGE, *(f"note {n}" for n in range(100))),
            model_calls=(call,) * 100,
        )


class FailsLoudly(Floods):
    """Fails with an exception carrying 9 million characters."""

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        raise ValueError("x" * HUGE)


def lines(run_dir):
    return (run_dir / "trace.jsonl").read_bytes().splitlines()


def test_what_a_plug_in_puts_in_a_step_is_kept_cut_saying_its_length(tmp_path, embedder):
    run_dir = tmp_path / "run"
    result = run(make_config(agents=1, steps=2, run_dir=run_dir), policy=Floods, embedder=embedder)
    assert result.summary["status"] == "completed"
    for raw in lines(run_dir):
        assert len(raw) < MAX_KEPT_LINE
    line = json.loads(lines(run_dir)[0])
    in_all = f"... [{HUGE:,} characters in all]"
    assert line["prompt"].startswith("ppp") and line["prompt"].endswith(in_all)
    assert line["policy"].startswith("ddd") and line["policy"].endswith(in_all)
    assert len(line["notes"]) == ITEMS_KEPT and line["notes"][0].endswith(in_all)
    assert line["notes"][-1] == f"... 102 notes in all: the first {ITEMS_KEPT - 1} are kept"  # 101, and the calls'
    calls = line["llm"]["calls"]
    assert len(calls) == ITEMS_KEPT and result.summary["llm"]["calls"] == 2 * ITEMS_KEPT
    assert calls[0]["reply"].endswith(in_all) and calls[0]["chars"] == HUGE
    assert calls[0]["model"].endswith(in_all) and calls[0]["error_message"].endswith(in_all)
    # The readers take every line.
    (run_dir / "summary.json").unlink()
    assert recover_summary(run_dir).summary["trace_lines_skipped"] == 0
    assert rebuild_report(run_dir).warnings == []


def test_a_plug_ins_failure_carrying_megabytes_is_kept_cut_and_the_run_goes_on(tmp_path, embedder):
    run_dir = tmp_path / "run"
    result = run(make_config(agents=1, steps=2, run_dir=run_dir), policy=FailsLoudly, embedder=embedder)
    assert result.summary["status"] == "completed" and result.summary["steps"] == {"Agent1": 2}
    for raw in lines(run_dir):
        assert len(raw) < MAX_KEPT_LINE
        (error,) = json.loads(raw)["errors"]
        failed = "decision failed: " + repr(ValueError("x" * HUGE))
        assert error.startswith("decision failed: ValueError('xxx") and error.endswith(
            f"[{len(failed):,} characters in all]"
        )
    (run_dir / "summary.json").unlink()
    assert recover_summary(run_dir).summary["trace_lines_skipped"] == 0


def test_a_line_made_twice_is_kept_the_same():
    # A split team's step is made a line in its own process, and again where it is committed.
    record = StepRecord("Agent1", 1, prompt="p" * HUGE, notes=["n" * HUGE] * 30, errors=["e" * HUGE])
    record.model_calls.append(ModelCall("decision", "model", "yaml", reply="r" * HUGE))
    line = record.to_dict()
    assert StepRecord.from_dict(line).to_dict() == line


def test_the_trace_refuses_a_line_longer_than_its_readers_take(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_module, "MAX_LINE_BYTES", 1_000)
    writer = TraceWriter(tmp_path / "trace.jsonl")
    writer.write({"step": 1})
    with pytest.raises(DiskWriteError, match=r"a line of 1,0\d\d bytes, over the 1,000 a trace's readers take"):
        writer.write({"step": 2, "text": "x" * 1_000})
    writer.close()
    assert (tmp_path / "trace.jsonl").read_text() == '{"step": 1}\n'
