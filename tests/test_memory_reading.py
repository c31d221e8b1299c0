"""Memories are retrieved only for a policy that reads them; the others' memory texts are embedded later, in
batches (memory/embedder.py), and a team's trace, saved memories and resumed runs are as when every text was
embedded at once and every agent searched its memory."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

from explorer.api import PolicySetup, make_config, run
from explorer.policies.offline import OfflineExplorer
from explorer.records.run_files import TraceLines
from explorer.testing.chat_server import ChatServer, Scripted
from memory.embedder import SentenceEmbedder

MODEL = "openai/test-model"
STEPS = 5
REPLY = "```yaml\nthinking: go on\naction: {action}\nreason: {action} at request {n}\nmessage_to_others: ''\n```"


class ReadingExplorer(OfflineExplorer):
    """The built-in explorer, saying that it reads its memories: it has them retrieved, as every agent did
    before a policy could say otherwise, and so its memory texts are embedded at once."""

    reads_memories = True

    def __init__(self, setup: PolicySetup) -> None:
        super().__init__()


@pytest.fixture(scope="module")
def eager():
    """A service that holds no text back: every memory is embedded as soon as it is made."""
    model = SentenceEmbedder(deferred_batch=1)
    model.wait_ready()
    return model


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def model_replies():
    """A model that moves on twice, then turns, request after request, from the first request of a run."""
    count, lock = iter(range(10_000)), threading.Lock()

    def answer(request):
        with lock:
            n = next(count)
        return REPLY.format(action="forward" if n % 3 else "look_left", n=n)

    return answer


def team_run(tmp_path, name, embedder, explorer, resume=None):
    """A model (Agent1) and a built-in explorer (Agent2, `explorer`) on one team; its trace lines."""
    profiles = tmp_path / f"{name}.yaml"
    profiles.write_text(json.dumps({"agents": [{"model": MODEL}, {"model": explorer}]}))
    with ChatServer(model_replies()) as server:
        config = make_config(
            agents=2,
            steps=STEPS,
            seed=4,
            world="office",
            profiles=str(profiles),
            api_base=server.api_base,
            run_dir=str(tmp_path / name),
            resume_memory=str(resume) if resume else None,
        )
        assert run(config, embedder=embedder).summary["status"] == "completed"
    return list(TraceLines(tmp_path / name / "trace.jsonl"))


def without_timings(line):
    """A trace line without what the clock decides: its timings and each model call's latency."""
    calls = [{k: v for k, v in call.items() if k != "latency"} for call in line["llm"]["calls"]]
    return {**{k: v for k, v in line.items() if k != "timings"}, "llm": {"calls": calls}}


def of(agent_id, lines):
    return [without_timings(line) for line in lines if line["agent_id"] == agent_id]


def saved(run_dir, agent_id):
    meta = json.loads((run_dir / "memory" / agent_id / "meta.json").read_text())
    return meta["count"], meta["index_sha256"], meta["texts_sha256"]


def test_a_team_with_deferred_memories_runs_saves_and_resumes_as_one_embedding_every_memory_at_once(
    tmp_path, embedder, eager
):
    deferred = team_run(tmp_path, "deferred", embedder, "offline")
    at_once = team_run(tmp_path, "at-once", eager, "tests.test_memory_reading:ReadingExplorer")

    # The model's steps, its prompts with the memories retrieved for it, are the same.
    assert of("Agent1", deferred) == of("Agent1", at_once)
    assert all(line["retrieved_memories"] for line in of("Agent1", deferred)[1:])
    # The built-in explorer has none retrieved, and decides and remembers as it did.
    explorer = of("Agent2", deferred)
    assert {(line["memory_query"], str(line["retrieved_memories"])) for line in explorer} == {("", "[]")}
    assert all(line["memory_query"] and line["retrieved_memories"] for line in of("Agent2", at_once)[1:])
    ignored = ("memory_query", "retrieved_memories", "prompt")  # what it did not read; the prompt shows it
    assert [{k: v for k, v in line.items() if k not in ignored} for line in explorer] == [
        {k: v for k, v in line.items() if k not in ignored} for line in of("Agent2", at_once)
    ]
    # Both save the same memories, byte for byte.
    for agent_id in ("Agent1", "Agent2"):
        assert saved(tmp_path / "deferred", agent_id) == saved(tmp_path / "at-once", agent_id)
        assert saved(tmp_path / "deferred", agent_id)[0] == STEPS

    # Resumed, the model's prompts show the same memories; the explorers' saves hold both runs' steps.
    again = team_run(tmp_path, "deferred-again", embedder, "offline", resume=tmp_path / "deferred")
    once_again = team_run(tmp_path, "at-once-again", eager, "offline", resume=tmp_path / "at-once")
    assert of("Agent1", again) == of("Agent1", once_again)
    assert "At position" in of("Agent1", again)[0]["prompt"]  # the first step already recalls the earlier run
    for agent_id in ("Agent1", "Agent2"):
        assert saved(tmp_path / "deferred-again", agent_id) == saved(tmp_path / "at-once-again", agent_id)
        assert saved(tmp_path / "deferred-again", agent_id)[0] == 2 * STEPS


def by_prompt(request):
    """A model whose reply depends on the whole prompt, the memories retrieved and their distances among it,
    given after a short wait: the team's calls are in flight while the service encodes the others' queries."""
    digest = hashlib.sha256(request["messages"][-1]["content"].encode()).digest()[0]
    action = ("forward", "forward", "look_left", "look_right")[digest % 4]
    return Scripted(text=REPLY.format(action=action, n=digest), delay=0.05)


def test_a_lockstep_teams_trace_is_byte_for_byte_that_of_every_text_encoded_alone(tmp_path, embedder):
    # The shared service starts a pass as soon as a worker is free and answers each search as soon as its own
    # rows are encoded, so a lock-step agent's model call goes out while its teammates' queries are still being
    # encoded. The rows are those of every text encoded alone, as if each agent had a model of its own: a row
    # that differed in one bit could change a distance, a memory retrieved, a reply and every step after it.
    naive = SentenceEmbedder(batching=False)
    naive.wait_ready()
    traces = []
    for name, service in (("pipelined", embedder), ("alone", naive)):
        with ChatServer(by_prompt) as server:
            config = make_config(
                agents=8,
                steps=STEPS,
                seed=2,
                world="office",
                model=MODEL,
                api_base=server.api_base,
                run_dir=str(tmp_path / name),
            )
            assert run(config, embedder=service).summary["status"] == "completed"
        trace = TraceLines(tmp_path / name / "trace.jsonl")
        traces.append([json.dumps(without_timings(line)).encode() for line in trace])
    pipelined, alone = traces
    read = [json.loads(line) for line in pipelined]
    assert len(read) == 8 * STEPS and all(line["retrieved_memories"] for line in read if line["step"] > 1)
    assert len({line["action"] for line in read}) > 1  # the replies tell the prompts apart
    assert pipelined == alone
