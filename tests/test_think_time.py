"""A profile's think_time: a decision takes simulated time on the event clock (--schedule event)."""

import itertools
import math
import random
import re
import threading

import pytest

from explorer.config.profiles import ProfileError, load_profiles
from explorer.config.run_config import RunConfig
from explorer.records.clock import clock
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.run.stop import RunFailed
from explorer.testing.chat_server import ChatServer, Scripted, error
from perception.base import Pose
from perception.geometry import apply_action
from perception.world import load_world
from tests.support.paths import WORLDS

MODEL = "openai/test-model"
CALL_COSTS = ("latency", "retries", "cost_usd", "replayed")  # what a replayed call does not repeat


@pytest.fixture
def run(tmp_path, embedder):
    """run(name, profiles text, **settings) -> (the trace's records, the summary)."""

    def go(name, profiles, **settings):
        path = tmp_path / f"{name}.yaml"
        path.write_text(profiles)
        settings = {"agents": 1, "steps": 12, "schedule": "event", **settings}
        config = RunConfig.of(run_dir=tmp_path / name, verbosity=-1, profiles=path, **settings).check()
        summary = ExplorationRun(config, embedder=embedder).execute()
        return list(TraceLines(tmp_path / name / "trace.jsonl")), summary

    return go


def lands(pose, action):
    world = load_world(WORLDS / "apartment.yaml")
    return apply_action(Pose.from_dict(pose), action, world.size, world.walls)[0]


@pytest.mark.parametrize("think, ticks", [(2, [0, 2, 4, 6, 8, 10]), (2.5, [0, 3, 6, 9])])
def test_a_think_time_lands_each_action_that_late_and_the_next_tick_waits_for_it(run, think, ticks):
    records, summary = run("slow", f"default: {{think_time: {think}}}\n")
    # The next tick is the first of the agent's ticks (one a second) once its decision is made.
    assert [r["time"] for r in records] == ticks and summary["steps"] == {"Agent1": len(ticks)}
    assert all(r["think_time"] == think and r["result"]["outcome"] == "pending" for r in records)
    for before, after in itertools.pairwise(records):
        # The action landed as the decision ended, before that tick: the tick sees it.
        assert Pose.from_dict(after["pose"]) == lands(before["pose"], before["action"])
        assert (
            f"(chosen at t={before['time'] + think:g}) took effect at t={before['time'] + think:g}"
            in (after["visible_caption"])
        )
    assert len({str(r["pose"]) for r in records}) > 2  # it moved, so landing was tested


def test_think_time_comes_before_act_delay_and_the_message_leaves_when_decided(run):
    records, _ = run("late", "default: {think_time: 1.5, act_delay: 1, msg_delay: 0.5}\n", agents=2)
    first = [r for r in records if r["agent_id"] == "Agent1"]
    assert [r["time"] for r in first] == [0, 2, 4, 6, 8, 10]
    # Decided at t + 1.5, landing at t + 2.5: the tick at t + 2 sees it on its way, the one at t + 4 landed.
    assert "has not taken effect yet: it will at t=2.5" in first[1]["visible_caption"]
    assert "(chosen at t=1.5) took effect at t=2.5" in first[2]["visible_caption"]
    assert Pose.from_dict(first[2]["pose"]) == lands(first[0]["pose"], first[0]["action"])
    reads = [m for r in records for m in r["messages_in"]]
    assert reads and all(
        m["sent_at"] % 2 == 1.5 and m["delivered_at"] == m["sent_at"] + 0.5 for m in reads
    )  # ticks at even times


def test_without_think_time_no_line_carries_one(run):
    records, _ = run("quick", "default: {msg_delay: 0}\n", agents=2, steps=4)
    assert records and not any("think_time" in r for r in records)
    assert [r["time"] for r in records if r["agent_id"] == "Agent1"] == [0, 1, 2, 3]


def test_a_built_in_policys_measured_think_time_is_its_own_decisions(run):
    records, _ = run("measured", "default: {think_time: measured}\n", steps=4)
    assert all(r["think_time"] == clock(r["timings"]["decision"]) for r in records)


def answers_after(delays):
    """A stub's answer: a decision after a delay drawn from `delays` (a random.Random)."""
    lock = threading.Lock()

    def answer(request):
        prompt = request["messages"][-1]["content"]
        step = int(re.search(r"## Step (\d+) of", prompt).group(1))
        with lock:
            delay = delays.uniform(0.05, 0.3)
        action = ("forward", "look_left", "forward")[step % 3]
        return Scripted(
            text=f"```yaml\naction: {action}\nreason: test\nmessage_to_others: step {step}\n```", delay=delay
        )

    return answer


def test_a_measured_think_time_is_the_model_calls_latency_and_a_replay_gives_it_again(run, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    profiles = "default: {tick_interval: 0.1, think_time: measured}\n"
    settings = {"agents": 2, "steps": 2, "model": MODEL}
    with ChatServer(answers_after(random.Random(7))) as server:
        records, summary = run("recorded", profiles, api_base=server.api_base, **settings)
    for agent in ("Agent1", "Agent2"):
        ticks = [r for r in records if r["agent_id"] == agent]
        for before, after in itertools.pairwise(ticks):
            assert before["think_time"] == clock(sum(call["latency"] for call in before["llm"]["calls"]))
            decided = clock(before["time"] + before["think_time"])
            assert after["time"] == clock(max(before["time"] + 0.1, math.ceil(clock(decided / 0.1)) * 0.1))
    assert any(r["think_time"] > 0.1 for r in records)  # some decisions outlasted a tick: ticks were skipped

    with ChatServer(lambda request: error(500)) as server:  # were it asked, every call would fail
        replayed, replay_summary = run(
            "replay", profiles, api_base=server.api_base, replay_replies=tmp_path / "recorded", **settings
        )
    assert server.requests == []

    def comparable(trace):
        return [
            {
                **{k: v for k, v in line.items() if k != "timings"},
                "llm": {"calls": [{k: v for k, v in c.items() if k not in CALL_COSTS} for c in line["llm"]["calls"]]},
            }
            for line in trace
        ]

    assert comparable(replayed) == comparable(records)  # the same ticks, on the recorded think times
    assert replay_summary["team"] == summary["team"]


def test_a_replay_needs_the_think_times_on_record(run, tmp_path):
    with ChatServer(answers_after(random.Random(1))) as server:
        run("recorded", "default: {tick_interval: 1}\n", model=MODEL, api_base=server.api_base, steps=2)
    with pytest.raises(RunFailed) as failed:
        run("replay", "default: {think_time: measured}\n", model=MODEL, replay_replies=tmp_path / "recorded", steps=2)
    assert failed.value.users_mistake
    assert "Agent1's step 1 has no think time on record" in str(failed.value)


def test_think_times_are_checked(tmp_path, embedder):
    for text, problem in (
        ("default: {think_time: slow}\n", "think_time must be 'measured' or a number of simulated seconds"),
        ("agents: [{think_time: -1}]\n", "think_time must be 'measured' or a number of simulated seconds, 0 or more"),
        ("default: {think_time: 0.0000001}\n", "below the clock's resolution"),
        # Issue 50, defect 16: the cap was never said.
        ("default: {think_time: 2000000}\n", "seconds, 0 or more and at most 1,000,000, not 2000000$"),
    ):
        path = tmp_path / "p.yaml"
        path.write_text(text)
        with pytest.raises(ProfileError, match=problem):
            load_profiles(path, 2, "offline")
    path = tmp_path / "p.yaml"
    path.write_text("default: {think_time: measured}\n")
    assert [p.think_time for p in load_profiles(path, 2, "offline")] == ["measured", "measured"]
    for schedule in ("lockstep", "realtime"):
        with pytest.raises(ConfigError, match="think_time\\): timings need --schedule event"):
            ExplorationRun(
                RunConfig.of(profiles=path, schedule=schedule, run_dir=tmp_path / "r").check(), embedder=embedder
            )
