"""Trace lines as earlier versions of the program wrote them, for the tests that read old traces."""

import json
from pathlib import Path

# What version 1 kept of a call in `llm.calls`: what it cost, and the kind of failure.
VERSION_1_CALL = ("purpose", "model", "prompt_tokens", "completion_tokens", "latency", "retries", "cost_usd", "error")


def as_version_1(line):
    """`line` as version 1 wrote it: no `trace_version`; each decision reply apart, in `attempts`
    (a vision reply nowhere); a failed call's message only in the step's `errors`."""
    calls = line["llm"]["calls"]
    old = {key: value for key, value in line.items() if key not in ("trace_version", "llm")}
    old["attempts"] = [
        {"reply": call["reply"], "chars": call["chars"], "error": call["reply_error"]}
        for call in calls
        if call["purpose"] != "vision" and call["error"] is None
    ]
    old["llm"] = {
        "calls": [
            {**{key: call[key] for key in VERSION_1_CALL}, **({"replayed": True} if call.get("replayed") else {})}
            for call in calls
        ]
    }
    return old


def rewrite_trace(run_dir, change):
    """Replace each line of the run's trace.jsonl with `change(line)`."""
    path = Path(run_dir) / "trace.jsonl"
    lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip()]
    path.write_text("".join(json.dumps(change(line)) + "\n" for line in lines), encoding="utf-8")
