"""Whole runs in-process: the real embedding model, mock perception, offline or stubbed backends."""

import json

import pytest

from explorer.config.run_config import RunConfig
from explorer.model.client import Reply
from explorer.policies.model_policy import ModelPolicy
from explorer.policies.offline import OfflineExplorer
from explorer.records.run_files import TraceLines
from explorer.records.trace import TIMING_FIELDS
from explorer.run.runner import ExplorationRun
from explorer.run.stop import RunFailed
from memory.embedder import EmbedderError
from memory.vector_memory import MemoryFileError
from perception.world import DEFAULT_WORLD, load_world
from tests.support.bounded import within
from tests.support.paths import WORLDS

TRACE_FIELDS = {
    "agent_id",
    "step",
    "pose",
    "visible_objects",
    "retrieved_memories",
    "messages_in",
    "prompt",
    "trace_version",
    "llm",
    "decision",
    "action",
    "result",
    "message_out",
    "new_objects",
    "timings",
    "errors",
}
SUMMARY_FIELDS = {
    "mode",
    "world",
    "seed",
    "model",
    "agents",
    "steps",
    "objects_discovered",
    "total_objects",
    "coverage",
    "first_full_discovery_step",
    "discovery_curve",
    "messages_sent",
    "llm",
    "wall_seconds",
    "startup",
}


def run(tmp_path, embedder, name="run", policy_factory=None, **settings):
    config = RunConfig.of(run_dir=tmp_path / name, verbosity=-1, **settings)
    extra = {"policy_factory": policy_factory} if policy_factory else {}
    summary = ExplorationRun(config, embedder=embedder, **extra).execute()
    return summary, list(TraceLines(tmp_path / name / "trace.jsonl"))


class ScriptedModel:
    """A stand-in model that answers with its scripted replies in turn, over and over."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def __call__(self, prompt):
        reply = self.replies[len(self.prompts) % len(self.replies)]
        self.prompts.append(prompt)
        if isinstance(reply, BaseException):
            raise reply
        return Reply(reply, "stub", prompt_tokens=7, completion_tokens=3)


def scripted(replies):
    """A policy factory: every agent's decisions come from the real ModelPolicy asking a ScriptedModel."""
    return lambda profile, agent_id, config, gate: ModelPolicy("stub", ScriptedModel(replies))


def test_two_agents_explore_the_default_world_and_record_everything(tmp_path, embedder):
    summary, trace = run(tmp_path, embedder, agents=2)

    assert set(summary) >= SUMMARY_FIELDS
    assert summary["status"] == "completed"
    assert summary["agents"] == ["Agent1", "Agent2"]
    assert summary["steps"] == {"Agent1": 40, "Agent2": 40}
    assert summary["total_objects"] == 12
    assert summary["coverage"] == 1.0
    assert summary["objects_discovered"] == sorted(summary["objects_discovered"])
    assert summary["first_full_discovery_step"] <= 40
    curve = summary["discovery_curve"]
    assert [k for k, _ in curve] == list(range(1, 41))
    assert [n for _, n in curve] == sorted(n for _, n in curve)
    assert curve[summary["first_full_discovery_step"] - 1][1] == 12
    assert summary["messages_sent"] > 0
    # The built-in explorer decides every step and makes no model call.
    assert summary["decisions"] == 80 and summary["llm"]["calls"] == 0 and summary["llm"]["parse_failures"] == 0
    assert {a: (s["policy"], s["decisions"]) for a, s in summary["per_agent"].items()} == {
        "Agent1": ("offline", 40),
        "Agent2": ("offline", 40),
    }
    assert all(r["policy"] == "offline" and r["llm"]["calls"] == [] and "attempts" not in r for r in trace)
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == summary
    team = summary["team"]
    assert team["total_cells"] == 12 * 9 - len(load_world(DEFAULT_WORLD).walls)
    assert [k for k, _ in team["coverage_curve"]] == list(range(1, 41))
    assert [share for _, share in team["coverage_curve"]] == sorted(share for _, share in team["coverage_curve"])
    assert team["steps_to_objects"]["100%"] == summary["first_full_discovery_step"]
    assert 0 < team["overlap_ratio"] < 1
    assert team["messages_per_agent_step"] == summary["messages_sent"] / 80 and team["model_calls_per_agent_step"] == 0

    assert len(trace) == 80
    assert [(r["step"], r["agent_id"]) for r in trace] == [(k, a) for k in range(1, 41) for a in ("Agent1", "Agent2")]
    for record in trace:
        assert set(record) >= TRACE_FIELDS
    # Every discovery is credited once, to the step that found it.
    credited = [name for record in trace for name in record["new_objects"]]
    assert sorted(credited) == summary["objects_discovered"]
    # Messages sent in step k are read by the other agent in step k + 1.
    sent = [(r["step"], r["agent_id"], r["message_out"]["message"]) for r in trace if r["message_out"]]
    received = {(r["step"], r["agent_id"], m["message"]) for r in trace for m in r["messages_in"]}
    assert sent
    for step, sender, text in sent:
        other = "Agent2" if sender == "Agent1" else "Agent1"
        if step < 40:
            assert (step + 1, other, text) in received
    # Memory: the explorer reads none, so none is recalled; one is kept per step all the same.
    assert all(r["memory_query"] == "" and r["retrieved_memories"] == [] for r in trace)
    for agent_id in ("Agent1", "Agent2"):
        assert json.loads((tmp_path / "run" / "memory" / agent_id / "meta.json").read_text())["count"] == 40


def without_timings(trace):
    return [{k: v for k, v in record.items() if k not in TIMING_FIELDS} for record in trace]


@pytest.mark.parametrize("agents", [1, 3])
def test_the_same_seed_gives_the_same_trace(tmp_path, embedder, agents):
    settings = dict(agents=agents, steps=12, world=WORLDS / "office.yaml", seed=7)
    first, first_trace = run(tmp_path, embedder, "first", **settings)
    second, second_trace = run(tmp_path, embedder, "second", **settings)
    assert without_timings(first_trace) == without_timings(second_trace)
    assert first["discovery_curve"] == second["discovery_curve"]


def test_another_seed_gives_another_run(tmp_path, embedder):
    settings = dict(agents=2, steps=5, world=WORLDS / "office.yaml")
    _, first = run(tmp_path, embedder, "first", seed=1, **settings)
    _, second = run(tmp_path, embedder, "second", seed=2, **settings)
    assert [r["pose"] for r in first] != [r["pose"] for r in second]


def test_two_agents_need_fewer_steps_than_one(tmp_path, embedder):
    garden = WORLDS / "garden.yaml"
    alone, _ = run(tmp_path, embedder, "alone", agents=1, steps=50, world=garden)
    pair, _ = run(tmp_path, embedder, "pair", agents=2, steps=50, world=garden)
    assert pair["coverage"] == 1.0
    assert pair["first_full_discovery_step"] < alone["first_full_discovery_step"]


def test_unreadable_replies_fall_back_to_a_scanning_action_and_are_counted(tmp_path, embedder):
    summary, trace = run(tmp_path, embedder, agents=2, steps=3, policy_factory=scripted(["I refuse.", "action: fly"]))
    assert summary["status"] == "completed"
    assert summary["llm"]["parse_failures"] == 6
    assert summary["llm"]["calls"] == 12  # each step: the reply and one re-prompt
    for record in trace:
        assert record["parse_failure"] is True
        assert record["action"] == "look_right"
        assert record["decision"] is None
        calls = record["llm"]["calls"]
        assert [c["reply_error"] for c in calls] == ["the reply has no `action` field", "unknown action 'fly'"]
        assert [c["reply"] for c in calls] == ["I refuse.", "action: fly"]
    assert "could not be used" not in trace[0]["prompt"]


def test_a_bad_reply_is_re_prompted_with_what_was_wrong(tmp_path, embedder):
    model = ScriptedModel(["action: teleport", "action: forward"])
    summary, trace = run(tmp_path, embedder, agents=1, steps=1, policy_factory=lambda *args: ModelPolicy("stub", model))
    assert trace[0]["action"] == "forward" and trace[0]["parse_failure"] is False
    assert "unknown action 'teleport'" in model.prompts[1] and "action: teleport" in model.prompts[1]
    llm = summary["llm"]
    assert (llm["calls"], llm["prompt_tokens"], llm["completion_tokens"], llm["parse_failures"]) == (2, 14, 6, 0)
    assert [call["prompt_tokens"] for call in trace[0]["llm"]["calls"]] == [7, 7]


def test_a_failing_policy_is_recorded_and_the_run_goes_on(tmp_path, embedder):
    summary, trace = run(tmp_path, embedder, agents=1, steps=2, policy_factory=scripted([ConnectionError("down")]))
    assert summary["status"] == "completed" and summary["steps"] == {"Agent1": 2}
    assert summary["llm"]["errors"] == 2
    assert "ConnectionError('down')" in trace[0]["errors"][0]
    assert trace[0]["action"] == "look_right"


def test_a_policy_that_exits_fails_the_run_and_its_teammate_does_not_wait_for_it(tmp_path, embedder):
    def exits_at_its_second_step(profile, agent_id, config, gate):
        return ModelPolicy(
            "stub", ScriptedModel(["action: forward", SystemExit(3)] if agent_id == "Agent2" else ["action: forward"])
        )

    with pytest.raises(RunFailed) as failed:
        within(60, lambda: run(tmp_path, embedder, agents=2, steps=4, policy_factory=exits_at_its_second_step))
    assert str(failed.value).startswith("Agent2 failed: SystemExit(3) (see ") and not failed.value.users_mistake
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["steps"]["Agent2"] == 1


def test_an_oversized_reply_is_read_and_kept_once_bounded(tmp_path, embedder):
    huge = "thinking: " + "w" * 1_000_000 + "\naction: forward\nreason: go"
    model = ScriptedModel([huge, "I refuse " * 100_000, "action: look_left"])
    _summary, trace = run(
        tmp_path, embedder, agents=1, steps=2, policy_factory=lambda *args: ModelPolicy("stub", model)
    )
    first, second = trace
    # The fields after a megabyte of thinking are read.
    assert first["action"] == "forward" and first["decision"]["reason"] == "go" and not first["parse_failure"]
    assert len(first["decision"]["thinking"]) <= 1000
    # Each reply is kept once, cut, with its length; the re-prompt quotes only an excerpt.
    assert [c["chars"] for c in second["llm"]["calls"]] == [900_000, 17]
    assert len(json.dumps(second)) < 30_000
    assert len(model.prompts[2]) < len(model.prompts[1]) + 2_000
    assert (tmp_path / "run" / "trace.jsonl").stat().st_size < 100_000


def test_a_message_to_an_unknown_agent_goes_to_all_and_is_noted(tmp_path, embedder):
    reply = "action: forward\nmessage_to_others: hello\nmessage_to: Agent9"
    summary, trace = run(tmp_path, embedder, agents=2, steps=2, policy_factory=scripted([reply]))
    assert summary["status"] == "completed"
    assert summary["messages_sent"] == 4
    assert trace[0]["message_out"] == {"recipient": "all", "message": "hello"}
    assert trace[0]["notes"] == ["message_to 'Agent9' is not a teammate; the message went to all"]
    assert [m["sender"] for m in trace[3]["messages_in"]] == ["Agent1"]


def test_direct_messages_reach_only_their_recipient(tmp_path, embedder):
    reply = "action: look_left\nmessage_to_others: psst\nmessage_to: agent3"
    _summary, trace = run(tmp_path, embedder, agents=3, steps=2, policy_factory=scripted([reply]))
    step2 = {r["agent_id"]: [m["sender"] for m in r["messages_in"]] for r in trace if r["step"] == 2}
    # Agent3's own note to itself goes to all instead, and says so.
    assert step2 == {"Agent1": ["Agent3"], "Agent2": ["Agent3"], "Agent3": ["Agent1", "Agent2"]}
    assert [r["message_out"]["recipient"] for r in trace if r["step"] == 1] == ["Agent3", "Agent3", "all"]
    assert trace[2]["notes"] and not trace[0]["notes"]


def test_no_comm_sends_and_reads_nothing(tmp_path, embedder):
    reply = "action: forward\nmessage_to_others: hello"
    summary, trace = run(tmp_path, embedder, agents=2, steps=3, comm="none", policy_factory=scripted([reply]))
    assert summary["messages_sent"] == 0
    assert all(r["message_out"] is None and r["messages_in"] == [] for r in trace)
    assert "Messaging is off" in trace[0]["prompt"]


def test_random_policy_takes_valid_varied_actions(tmp_path, embedder):
    summary, trace = run(tmp_path, embedder, agents=2, steps=15, model="random")
    actions = [r["action"] for r in trace]
    assert len(set(actions)) >= 5
    assert summary["llm"]["parse_failures"] == 0
    assert all(r["result"]["outcome"] in ("moved", "turned", "blocked") for r in trace)


def test_the_prompt_carries_the_context(tmp_path, embedder):
    _, trace = run(tmp_path, embedder, agents=2, steps=3)
    prompt = trace[-1]["prompt"]
    for part in (
        "Agent2",
        "Step 3 of 3",
        "x grows to the east",
        "Found by the team so far",
        "Where the other agents are",
        "- Agent1: (",
        "Your last actions",
        "step 2: ",
        "- forward: move one cell ahead",
        "message_to_others",
    ):
        assert part in prompt, part


@pytest.mark.parametrize("world", sorted(WORLDS.glob("*.yaml")), ids=lambda path: path.stem)
def test_two_agents_find_every_object_of_each_shipped_world_within_its_budget(tmp_path, embedder, world):
    summary, _ = run(tmp_path, embedder, agents=2, world=world)
    assert summary["coverage"] == 1.0, summary["objects_discovered"]
    assert summary["first_full_discovery_step"] <= max(summary["steps"].values())


def test_a_provider_failure_after_a_bad_reply_keeps_the_bad_reply_in_the_trace(tmp_path, embedder):
    from explorer.model.client import LLMError

    failure = LLMError("server down", kind="server", status=503, retries=4, model="stub", latency=9.5)
    summary, trace = run(tmp_path, embedder, agents=1, steps=1, policy_factory=scripted(["action: fly", failure]))
    record = trace[0]
    assert record["action"] == "look_right"
    bad_reply, failed = record["llm"]["calls"]
    assert (bad_reply["reply"], bad_reply["chars"], bad_reply["reply_error"]) == (
        "action: fly",
        11,
        "unknown action 'fly'",
    )
    assert "server down" in record["errors"][0]
    # The failed call is counted too, with what it cost and how it failed.
    assert summary["llm"]["calls"] == 2 and summary["llm"]["failed_calls"] == 1 and summary["llm"]["errors"] == 1
    assert (bad_reply["error"], failed["error"], failed["error_message"], failed["reply"]) == (
        None,
        "server",
        "server down",
        None,
    )
    assert (failed["retries"], failed["latency"]) == (4, 9.5)


def test_the_start_up_times_are_in_the_summary(tmp_path, embedder):
    summary, _ = run(tmp_path, embedder, agents=1, steps=2)
    started, done = summary["startup"]["first_step_started_seconds"], summary["startup"]["first_step_done_seconds"]
    assert 0 <= started <= done


class UnloadableEmbedder:
    """An embedding model that failed to load, as with a broken install."""

    name, dimension, backend = "broken", 384, "onnx"

    def wait_loaded(self):
        pass

    def wait_ready(self):
        raise EmbedderError("cannot load the embedding model broken: no model files")

    def submit(self, texts, deferred=False):
        self.wait_ready()

    def encode(self, texts):
        self.wait_ready()


def test_a_model_that_cannot_load_fails_the_run_with_its_reason(tmp_path):
    with pytest.raises(RunFailed, match=r"^cannot load the embedding model broken: no model files"):
        run(tmp_path, UnloadableEmbedder(), agents=2, steps=3)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["error"].startswith("cannot load the embedding model")


class ReadingExplorer(OfflineExplorer):
    """The built-in explorer, saying it reads the memories retrieved for it."""

    reads_memories = True


def test_memories_are_saved_with_the_run_and_resumed_by_a_later_one(tmp_path, embedder):
    run(tmp_path, embedder, name="first", agents=2, steps=3)
    _, trace = run(
        tmp_path,
        embedder,
        name="second",
        agents=2,
        steps=1,
        resume_memory=tmp_path / "first",
        policy_factory=lambda *args: ReadingExplorer(),
    )
    first_step = {r["agent_id"]: r for r in trace}
    # At its first step each agent already recalls what it did in the first run.
    assert all(len(first_step[a]["retrieved_memories"]) == 3 for a in ("Agent1", "Agent2"))
    assert all(text.startswith("At position") for text, _ in first_step["Agent1"]["retrieved_memories"])
    saved = json.loads((tmp_path / "second" / "memory" / "Agent1" / "meta.json").read_text())
    assert saved["count"] == 4  # three resumed, one new


def test_a_memory_saved_with_another_embedding_model_is_refused(tmp_path, embedder):
    run(tmp_path, embedder, name="first", agents=1, steps=1)
    meta = tmp_path / "first" / "memory" / "Agent1" / "meta.json"
    meta.write_text(meta.read_text().replace("all-MiniLM-L6-v2", "all-mpnet-base-v2"))
    with pytest.raises(MemoryFileError, match="saved with embedding model 'sentence-transformers/all-mpnet-base-v2'"):
        ExplorationRun(
            RunConfig.of(agents=1, run_dir=tmp_path / "second", resume_memory=tmp_path / "first"), embedder=embedder
        )
