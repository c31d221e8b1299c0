"""The event-driven schedule: a simulated clock with per-agent tick intervals and delays."""

import json

import pytest

from explorer.config.profiles import ProfileError, coordinator_profile, load_profiles
from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.run.runner import ExplorationRun
from perception.base import Pose
from perception.geometry import apply_action
from perception.world import load_world
from tests.support.paths import WORLDS

TIMING_FIELDS = ("timings", "observed_time")  # the wall clock's, and what lock-step does not keep


@pytest.fixture
def run(tmp_path, embedder):
    """run(name, profiles text or None, **settings) -> (the trace's records, the summary)."""

    def go(name, profiles=None, **settings):
        settings = {"agents": 2, "steps": 12, **settings}
        path = None
        if profiles is not None:
            path = tmp_path / f"{name}.yaml"
            path.write_text(profiles)
        config = RunConfig.of(run_dir=tmp_path / name, verbosity=-1, profiles=path, **settings).check()
        summary = ExplorationRun(config, embedder=embedder).execute()
        return list(TraceLines(tmp_path / name / "trace.jsonl")), summary

    return go


def without_clock(records):
    for record in records:
        for key in TIMING_FIELDS:
            record.pop(key)
    return records


@pytest.mark.parametrize("world", sorted(path.stem for path in WORLDS.glob("*.yaml")))
def test_with_default_timings_the_clock_runs_as_lockstep(run, world):
    for agents in (1, 2, 3):
        lockstep, _ = run(f"lockstep{agents}", world=WORLDS / f"{world}.yaml", agents=agents, steps=15)
        event, summary = run(
            f"event{agents}", world=WORLDS / f"{world}.yaml", agents=agents, steps=15, schedule="event"
        )
        assert [r["time"] for r in event] == [float(r["step"] - 1) for r in event]
        assert without_clock(event) == without_clock(lockstep)
        assert summary["schedule"] == "event"
        if agents > 1:
            assert any(r["messages_in"] for r in event)  # the messages were compared, not only the moves


def test_a_message_delay_of_three_seconds_is_read_three_steps_later_or_more(run):
    records, summary = run("late", "default: {msg_delay: 3}\n", agents=3, steps=20, schedule="event")
    reads = [(r["step"], m) for r in records for m in r["messages_in"]]
    assert reads, "the team sent messages"
    for step, message in reads:
        assert message["step"] <= step - 3
        assert message["delivered_at"] == message["sent_at"] + 3
    assert summary["messages"]["read_late"] == len(reads)
    assert summary["messages"]["read_after_seconds"]["mean"] >= 4  # delivered at t + 3, read at the next tick after
    sent_late = [r for r in records if r["message_out"] and r["time"] + 3 >= 20]
    assert summary["messages"]["never_delivered"] == len(sent_late) > 0


def test_an_observation_delay_shows_the_pose_of_that_time(run):
    records, _ = run("stale", "default: {obs_delay: 2}\n", agents=1, steps=15, schedule="event")
    start = records[0]["pose"]
    for record in records:
        assert record["observed_time"] == max(record["time"] - 2, 0)
        step = record["step"]
        # Tick k (t = k - 1) sees the world of t = k - 3: after the actions of steps up to k - 3.
        expected = records[step - 4]["result"]["pose"] if step >= 4 else start
        assert record["pose"] == expected
    world = load_world(WORLDS / "apartment.yaml")
    for record in records:
        assert sorted(record["visible_objects"]) == sorted(world.view(Pose.from_dict(record["pose"]))[0])
    assert len({json.dumps(r["pose"]) for r in records}) > 3  # it moved, so the delay was tested


def test_an_action_delay_moves_the_agent_that_much_later(run):
    records, _summary = run("slow", "default: {act_delay: 2}\n", agents=1, steps=15, schedule="event")
    world = load_world(WORLDS / "apartment.yaml")
    assert all(r["result"]["outcome"] == "pending" for r in records)
    pose = Pose.from_dict(records[0]["pose"])
    for record in records[3:]:
        # The action of step j (t = j - 1) takes effect at t = j + 1, after that tick: seen from step j + 3.
        pose = apply_action(pose, records[record["step"] - 4]["action"], world.size, world.walls)[0]
        assert Pose.from_dict(record["pose"]) == pose
    assert "has not taken effect yet" in records[1]["visible_caption"]
    assert "took effect at t=2" in records[3]["visible_caption"]
    assert len({json.dumps(r["pose"]) for r in records}) > 3


def test_mixed_intervals_and_delays_give_the_same_trace_for_the_same_seed(run):
    profiles = (
        "default: {obs_delay: 0.5, act_delay: 1, msg_delay: 1.5}\n"
        "agents: [{tick_interval: 1}, {tick_interval: 2}, {tick_interval: 3, msg_delay: 0}]\n"
    )
    first, summary = run("one", profiles, agents=3, steps=20, schedule="event", seed=7)
    second, _ = run("two", profiles, agents=3, steps=20, schedule="event", seed=7)
    ticks = {agent: [r["time"] for r in first if r["agent_id"] == agent] for agent in ("Agent1", "Agent2", "Agent3")}
    assert ticks == {
        "Agent1": [float(t) for t in range(20)],
        "Agent2": [float(t) for t in range(0, 20, 2)],
        "Agent3": [float(t) for t in range(0, 20, 3)],
    }
    assert summary["steps"] == {"Agent1": 20, "Agent2": 10, "Agent3": 7}
    assert [r["time"] for r in first] == sorted(r["time"] for r in first)  # committed in the clock's order
    assert [r for r in first if r["messages_in"]]
    assert [{k: v for k, v in r.items() if k != "timings"} for r in first] == [
        {k: v for k, v in r.items() if k != "timings"} for r in second
    ]


def test_timings_are_checked(tmp_path, embedder):
    for text, error in (
        ("default: {tick_interval: 0}\n", "tick_interval must be a number of simulated seconds, more than 0"),
        ("agents: [{msg_delay: -1}]\n", "msg_delay must be a number of simulated seconds, 0 or more"),
        ("coordinator: {obs_delay: late}\n", "obs_delay must be a number"),
        ("default: {tick_interval: 20000000}\n", "tick_interval .* more than 0 and at most 1,000,000, not 20000000$"),
    ):
        path = tmp_path / "p.yaml"
        path.write_text(text)
        with pytest.raises(ProfileError, match=error):
            (
                coordinator_profile(path, "offline")
                if text.startswith("coordinator")
                else load_profiles(path, 2, "offline")
            )
    path = tmp_path / "p.yaml"
    path.write_text("default: {msg_delay: 2}\n")
    with pytest.raises(ConfigError, match="timings need --schedule event"):
        ExplorationRun(RunConfig.of(profiles=path, run_dir=tmp_path / "r").check(), embedder=embedder)
    assert not (tmp_path / "r").exists()
    with pytest.raises(ConfigError, match="--schedule event needs --mode mock"):
        RunConfig.of(mode="unity", window_titles=("Game",), schedule="event").check()


@pytest.mark.parametrize(
    "profiles, fastest",
    [
        ("coordinator: {tick_interval: 0.000001}\n", "Coordinator every 1e-06"),  # 265,000 ticks in 24 s
        ("default: {tick_interval: 0.000001}\n", "Agent1 every 1e-06"),  # --steps 5: five million ticks
        ("agents: [{tick_interval: 0.01}, {tick_interval: 0.5}]\n", "Agent1 every 0.01"),
    ],
)
def test_intervals_that_would_tick_far_more_than_the_steps_are_refused_at_start(tmp_path, embedder, profiles, fastest):
    path = tmp_path / "p.yaml"
    path.write_text(profiles)
    config = RunConfig.of(
        profiles=path, schedule="event", coordinator="offline", steps=5, run_dir=tmp_path / "r", verbosity=-1
    ).check()
    with pytest.raises(ConfigError, match=f"{fastest}\\), more than 10 per member: a run may make at most 10 x"):
        ExplorationRun(config, embedder=embedder)
    assert not (tmp_path / "r").exists()


def test_a_team_within_ten_ticks_per_member_per_second_is_run(run):
    # 10 + 10 + 1/5 (the Coordinator's default) ticks a second: under 10 for each of three members.
    records, summary = run("fast", "default: {tick_interval: 0.1}\n", steps=2, schedule="event", coordinator="offline")
    assert summary["steps"] == {"Agent1": 20, "Agent2": 20, "Coordinator": 1}
    assert len(records) == 20 + 20 + 1
