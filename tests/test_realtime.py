"""--schedule realtime: no barrier between agents, each step committed as it finishes, and a replay that
commits in the recorded order."""

import json
import random
import re
import shutil
import threading

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from explorer.run.stop import RunFailed
from explorer.schedule.as_perceived import RealtimePerception, TeamAsPerceived
from explorer.schedule.realtime import RealtimeSchedule
from explorer.team.store import InProcessStore
from explorer.testing.chat_server import ChatServer, Scripted, error
from nodes.interfaces import RunStopped, StepReport
from nodes.record import StepRecord
from perception.base import Message
from perception.mock import MockPerception
from perception.world import load_world
from tests.support.bounded import within
from tests.support.paths import WORLDS

MODEL = "openai/test-model"
ACTIONS = ("forward", "look_left", "forward", "look_right")
CALL_COSTS = ("latency", "retries", "cost_usd", "replayed")  # what a replayed call does not repeat
WAIT_SECONDS = 60  # a scripted reply held for another agent's step gives up after this: a test never hangs
REPLAY_SECONDS = 60  # a replay that waits for a commit that cannot come fails its test after this


def decision(agent, step):
    action = ACTIONS[(step + int(agent[-1])) % len(ACTIONS)]
    return (
        f"```yaml\nthinking: scripted\naction: {action}\nreason: test\nmessage_to_others: {agent} at step {step}\n```"
    )


def asked(request):
    """(agent, step) of a decision's prompt."""
    prompt = request["messages"][-1]["content"]
    return re.search(r"You are (Agent\d+)", prompt).group(1), int(re.search(r"## Step (\d+) of", prompt).group(1))


def held_until(*holds, delays=None):
    """A stub's answer: for each (waiter, awaited) of `holds`, the step `waiter` = (agent, step) is answered
    only once `awaited` has been asked; every answer after a delay drawn from `delays` (a random.Random), if given."""
    came, lock = {awaited: threading.Event() for _, awaited in holds}, threading.Lock()

    def answer(request):
        agent_step = asked(request)
        if agent_step in came:
            came[agent_step].set()
        for waiter, awaited in holds:
            if agent_step == waiter:
                came[awaited].wait(WAIT_SECONDS)
        with lock:
            delay = delays.uniform(0, 0.04) if delays else 0.0
        return Scripted(text=decision(*agent_step), delay=delay)

    return answer


def run(run_dir, embedder, **settings):
    settings = {"agents": 2, "steps": 5, "model": MODEL, "schedule": "realtime", **settings}
    config = RunConfig.of(run_dir=run_dir, verbosity=-1, **settings).check()
    summary = ExplorationRun(config, embedder=embedder).execute()
    return list(TraceLines(run_dir / "trace.jsonl")), summary


def line_of(trace, agent, step):
    return next(line for line in trace if line["agent_id"] == agent and line["step"] == step)


def comparable(trace):
    """The trace but for what a replay cannot repeat: the nodes' wall times, and what each call cost."""
    return [
        {
            **{k: v for k, v in line.items() if k != "timings"},
            "llm": {"calls": [{k: v for k, v in c.items() if k not in CALL_COSTS} for c in line["llm"]["calls"]]},
        }
        for line in trace
    ]


# ---- the commit -----------------------------------------------------------------------------------


def test_an_agent_sees_the_team_as_it_was_when_it_perceived(tmp_path):
    store = InProcessStore()
    mock = MockPerception(load_world(WORLDS / "apartment.yaml"), store, ["Agent1", "Agent2"], seed=1)
    for agent in ("Agent1", "Agent2"):
        store.register_agent(agent, mock.get_agent_state(agent).to_dict())

    def commit(reports, at, complete=True, step=None):
        store.commit_step(reports)

    schedule = RealtimeSchedule(["Agent1", "Agent2"], 3, commit)
    team = TeamAsPerceived(store)
    perception = RealtimePerception(mock, schedule, team)

    perception.observe("Agent1", 1)
    said = Message("Agent2", "all", "the sofa is here", 1)
    assert schedule.hand_in(StepReport("Agent2", 1, None, ["sofa"], [said], {"position": [1, 1, 0], "facing": "north"}))
    # Agent2's step is committed, but Agent1's step under way read the team before it.
    assert "sofa" in store.discoveries() and "sofa" not in team.discoveries()
    assert team.positions()["Agent2"] != {"position": [1, 1, 0], "facing": "north"}
    assert perception.poll_messages("Agent1") == []
    elsewhere = []
    reader = threading.Thread(target=lambda: elsewhere.append(team.discoveries()))
    reader.start()
    reader.join()
    assert "sofa" in elsewhere[0]  # a thread that has not perceived reads the store itself

    record = StepRecord("Agent1", 1)
    assert schedule.hand_in(StepReport("Agent1", 1, record, []))
    assert (record.seen_commits, record.commit_index) == (0, 1)  # it saw no commit; it was the second
    observation = perception.observe("Agent1", 2)
    assert observation.time is not None and "sofa" in team.discoveries()
    [message] = perception.poll_messages("Agent1")
    assert message.message == "the sofa is here" and message.sent_at == message.delivered_at is not None

    schedule.finish()  # a spent budget: the step under way is committed, and no other begins
    assert not schedule.hand_in(StepReport("Agent1", 2, None, []))
    with pytest.raises(RunStopped):
        perception.observe("Agent2", 2)


def test_each_step_is_committed_as_it_finishes_without_waiting_for_the_team(tmp_path, embedder):
    # Agent2's first reply waits until Agent1 asks at step 4: under lock-step that would never come. Agent1's
    # first waits until Agent2 has asked, so Agent2 has perceived before any commit however late its thread starts.
    holds = ((("Agent1", 1), ("Agent2", 1)), (("Agent2", 1), ("Agent1", 4)))
    with ChatServer(held_until(*holds)) as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base)
    assert summary["status"] == "completed" and summary["steps"] == {"Agent1": 5, "Agent2": 5}
    assert [line["commit_index"] for line in trace] == list(range(10))  # the trace is in commit order
    assert [line["commit_time"] for line in trace] == sorted(line["commit_time"] for line in trace)
    assert all(line["time"] <= line["commit_time"] for line in trace)
    order = [(line["agent_id"], line["step"]) for line in trace]
    assert order[:3] == [("Agent1", 1), ("Agent1", 2), ("Agent1", 3)]
    assert line_of(trace, "Agent1", 4)["seen_commits"] == 3 and line_of(trace, "Agent2", 1)["seen_commits"] == 0
    # Agent2's second step reads what Agent1 said meanwhile, each message as its step was committed.
    read = line_of(trace, "Agent2", 2)["messages_in"]
    assert [m["message"] for m in read][:3] == [f"Agent1 at step {step}" for step in (1, 2, 3)]
    for message in read:
        sent = line_of(trace, message["sender"], message["step"])
        assert message["sent_at"] == message["delivered_at"] == sent["commit_time"]


def test_an_agents_search_does_not_wait_to_be_gathered_with_teammates_that_are_not_asking(tmp_path, embedder):
    # Agent2's and Agent3's first replies wait until Agent1 asks at step 4, so meanwhile only Agent1 asks the
    # embedding service anything. Out of step, nobody comes to be gathered with it: a service that waited for
    # the team's three requests held each search.
    holds = (
        (("Agent1", 1), ("Agent2", 1)),
        (("Agent1", 1), ("Agent3", 1)),
        (("Agent2", 1), ("Agent1", 4)),
        (("Agent3", 1), ("Agent1", 4)),
    )
    with ChatServer(held_until(*holds)) as server:
        trace, summary = within(
            WAIT_SECONDS / 2, lambda: run(tmp_path / "run", embedder, agents=3, api_base=server.api_base)
        )
    assert summary["steps"] == {"Agent1": 5, "Agent2": 5, "Agent3": 5}
    assert [(line["agent_id"], line["step"]) for line in trace][:3] == [("Agent1", 1), ("Agent1", 2), ("Agent1", 3)]
    assert all(line["retrieved_memories"] for line in trace if line["agent_id"] == "Agent1" and line["step"] > 1)


def test_the_summary_counts_agent_steps_per_second_and_each_agents_wait(tmp_path, embedder):
    with ChatServer(held_until(delays=random.Random(3))) as server:
        trace, summary = run(tmp_path / "run", embedder, api_base=server.api_base)
    realtime, end = summary["realtime"], max(line["commit_time"] for line in trace)
    assert realtime["agent_steps_per_second"] == round(10 / end, 3)
    for agent in ("Agent1", "Agent2"):
        lines = [line for line in trace if line["agent_id"] == agent]
        waits = realtime["per_agent"][agent]
        assert waits["seconds"] == round(lines[-1]["commit_time"], 3)
        assert waits["model_seconds"] == round(sum(c["latency"] for line in lines for c in line["llm"]["calls"]), 3)
        assert waits["other_seconds"] == pytest.approx(waits["seconds"] - waits["model_seconds"], abs=0.002)
    assert summary["team"]["seconds_curve"][-1][0] == end  # the team's finds against the clock
    assert summary["schedule"] == "realtime"


# ---- the replay -----------------------------------------------------------------------------------


@pytest.mark.parametrize("draw", [1, 2, 3])
def test_a_replay_commits_in_the_recorded_order_and_gives_the_same_trace(tmp_path, embedder, draw, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = {"agents": 3, "steps": 5}
    # Latencies drawn anew each time; Agent3 waits for Agent1's third step, so the order is never lock-step's.
    with ChatServer(held_until((("Agent3", 1), ("Agent1", 3)), delays=random.Random(draw))) as server:
        trace, summary = run(tmp_path / "recorded", embedder, api_base=server.api_base, **settings)
    assert [(line["agent_id"], line["step"]) for line in trace][:3] != [("Agent1", 1), ("Agent2", 1), ("Agent3", 1)]
    with ChatServer(lambda request: error(500)) as server:  # were it asked, every call would fail
        replayed, replay_summary = run(
            tmp_path / "replay", embedder, api_base=server.api_base, replay_replies=tmp_path / "recorded", **settings
        )
    assert server.requests == []
    assert comparable(replayed) == comparable(trace)  # the clock, the commit order and what each step saw
    assert replay_summary["team"] == summary["team"] and replay_summary["discoveries"] == summary["discoveries"]
    assert replay_summary["realtime"]["agent_steps_per_second"] == summary["realtime"]["agent_steps_per_second"]


def test_a_run_a_budget_stopped_ends_cleanly_and_replays_to_the_same_end(tmp_path, embedder):
    with ChatServer(held_until(delays=random.Random(5))) as server:
        trace, summary = run(tmp_path / "recorded", embedder, api_base=server.api_base, steps=10, max_calls=6)
    assert summary["status"] == "budget_exhausted"
    assert [line["commit_index"] for line in trace] == list(range(len(trace)))
    assert sum(summary["steps"].values()) < 20
    replayed, replay_summary = run(
        tmp_path / "replay", embedder, steps=10, max_calls=6, replay_replies=tmp_path / "recorded"
    )
    assert comparable(replayed) == comparable(trace) and replay_summary["status"] == "budget_exhausted"


def test_a_replay_of_another_schedules_run_is_refused_in_one_line(tmp_path, embedder):
    with ChatServer(held_until()) as server:
        run(tmp_path / "recorded", embedder, api_base=server.api_base, steps=2, schedule="lockstep")
    with pytest.raises(RunFailed) as failed:
        run(tmp_path / "replay", embedder, steps=2, replay_replies=tmp_path / "recorded")
    assert failed.value.users_mistake and "\n" not in str(failed.value)
    assert (
        f"--replay-replies {tmp_path / 'recorded'}: the recorded run did not run under --schedule realtime "
        "(its trace keeps no commit order)" in str(failed.value)
    )


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory, embedder):
    """(run directory, trace) of three built-in explorers under --schedule realtime, four steps each."""
    run_dir = tmp_path_factory.mktemp("realtime") / "recorded"
    trace, _ = run(run_dir, embedder, agents=3, steps=4, model="offline")
    assert [line["commit_index"] for line in trace] == list(range(12))  # the trace is in commit order
    return run_dir, trace


def replay_of(offline_run, lines, tmp_path, embedder, **settings):
    """The replay of a copy of the offline run whose trace holds `lines`, failing the test if it hangs."""
    copy = tmp_path / "recorded"
    shutil.copytree(offline_run[0], copy)
    (copy / "trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    settings = {"agents": 3, "steps": 4, "model": "offline", "replay_replies": copy, **settings}
    return within(REPLAY_SECONDS, lambda: run(tmp_path / "replay", embedder, **settings))


def saw_more_than_came(trace):
    lines = [dict(line) for line in trace]
    lines[4]["seen_commits"] = 6
    return lines, f"{lines[4]['agent_id']}'s step {lines[4]['step']} saw 6 commits, but only 4 come before it"


def missed_its_own_step(trace):
    lines, first = [dict(line) for line in trace], trace[0]["agent_id"]  # its step 1 is the first commit
    line_of(lines, first, 2)["seen_commits"] = 0
    return lines, f"{first}'s step 2 saw 0 commits, so not its own step 1, commit 1"


def lost_a_step(trace):
    """The trace without one agent's step 2, its commit order closed up around the gap."""
    first = trace[0]["agent_id"]
    gone = line_of(trace, first, 2)["commit_index"]
    lines = [dict(line) for line in trace if line is not line_of(trace, first, 2)]
    for line in lines:
        line["commit_index"] -= line["commit_index"] > gone
        line["seen_commits"] -= line["seen_commits"] > gone
    return lines, f"its trace has {first}'s step 3, but not step 2"


@pytest.mark.parametrize(
    "forged, settings, problem",
    [
        (saw_more_than_came, {}, None),
        (missed_its_own_step, {}, None),
        (lost_a_step, {}, None),
        (None, {"agents": 2}, "its trace has Agent3's step 1, and Agent3 is not on this run's team"),
        (None, {"steps": 3}, "step 4, past this run's 3 steps"),
    ],
    ids=[
        "a step saw more commits than came before it",
        "a step missed its own",
        "a step is missing",
        "a team of 2",
        "3 steps",
    ],
)
def test_a_replay_never_waits_for_a_commit_that_cannot_come(offline_run, tmp_path, embedder, forged, settings, problem):
    lines, problem = forged(offline_run[1]) if forged else (offline_run[1], problem)
    with pytest.raises(RunFailed) as failed:
        replay_of(offline_run, lines, tmp_path, embedder, **settings)
    assert failed.value.users_mistake and "\n" not in str(failed.value)
    assert f"--replay-replies {tmp_path / 'recorded'}: " in str(failed.value) and problem in str(failed.value)
    assert "no run commits its steps so" in str(failed.value)


def test_a_cut_trace_replays_as_far_as_it_goes_and_says_it_was_cut(offline_run, tmp_path, embedder):
    trace = offline_run[1]
    # As a run killed after its seventh commit leaves it (or later, so that every agent has a step in it).
    everyone_in = max(
        next(i for i, line in enumerate(trace) if line["agent_id"] == a) for a in ("Agent1", "Agent2", "Agent3")
    )
    cut = trace[: max(7, everyone_in + 1)]
    with pytest.raises(RunFailed) as failed:
        replay_of(offline_run, cut, tmp_path, embedder)
    last = {line["agent_id"]: line["step"] for line in cut}
    ends = ", ".join(f"{agent} at step {last[agent]}" for agent in ("Agent1", "Agent2", "Agent3") if last[agent] < 4)
    assert failed.value.users_mistake and "\n" not in str(failed.value)
    assert (
        f"its trace ends before the recorded run did ({ends}, of 4): it was cut short, as a killed run's is, "
        "and the replay stops where it does" in str(failed.value)
    )
    assert comparable(list(TraceLines(tmp_path / "replay" / "trace.jsonl"))) == comparable(cut)
    summary = json.loads((tmp_path / "replay" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["steps"] == last


def test_one_agents_failure_stops_the_others(tmp_path, embedder):
    def answer(request):
        agent, step = asked(request)
        return error(401, "bad key") if (agent, step) == ("Agent2", 2) else decision(agent, step)

    with ChatServer(answer) as server, pytest.raises(RunFailed) as failed:
        run(tmp_path / "run", embedder, api_base=server.api_base, steps=50)
    assert failed.value.users_mistake
    trace = list(TraceLines(tmp_path / "run" / "trace.jsonl"))
    assert [line["commit_index"] for line in trace] == list(range(len(trace))) and len(trace) < 100
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "failed"


def test_what_realtime_does_not_run_is_refused_at_start():
    for settings, problem in (
        ({"mode": "unity", "window_titles": ("Game",)}, "--schedule realtime needs --mode mock"),
        ({"coordinator": "offline"}, "not with --coordinator or --store"),
        ({"store": "redis://127.0.0.1:1/0"}, "not with --coordinator or --store"),
    ):
        with pytest.raises(ConfigError, match=problem):
            RunConfig.of(schedule="realtime", **settings).check()
