"""A model as the agents' policy in a whole run, through the real litellm path, against a local server."""

from explorer.config.run_config import RunConfig
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.testing.chat_server import ChatServer

REPLY = """Here is my decision:
```yaml
thinking: "I should look around"
action: look_left
reason: "scan the room"
message_to_others: "Scanning the living room"
```"""


def test_a_litellm_model_decides_every_step(tmp_path, embedder, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(lambda request: REPLY) as server:
        config = RunConfig.of(
            agents=2,
            steps=3,
            model="openai/test-model",
            api_base=server.api_base,
            run_dir=tmp_path / "run",
            verbosity=-1,
        )
        summary = ExplorationRun(config, embedder=embedder).execute()
    trace = list(TraceLines(tmp_path / "run" / "trace.jsonl"))

    assert summary["status"] == "completed"
    assert len(server.requests) == 6  # one call per agent-step
    llm = summary["llm"]
    assert (llm["calls"], llm["prompt_tokens"], llm["completion_tokens"], llm["retries"], llm["errors"]) == (
        6,
        600,
        120,
        0,
        0,
    )
    assert llm["cost_usd"] is None  # a model litellm has no price for, and no --price-in/--price-out
    assert 0 < llm["latency_seconds"]["p50"] <= llm["latency_seconds"]["p99"]
    assert summary["per_agent"]["Agent1"]["llm"]["calls"] == 3
    assert all(r["action"] == "look_left" and r["llm"]["calls"][0]["model"] == "openai/test-model" for r in trace)
    # The request carries the prompt the trace recorded.
    prompts = {r["prompt"] for r in trace}
    assert {request["messages"][-1]["content"] for request in server.requests} == prompts
    assert all(request["model"] == "test-model" for request in server.requests)
    assert summary["messages_sent"] == 6
