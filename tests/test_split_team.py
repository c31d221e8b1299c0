"""A team split across processes on a real redis-server: the same run as one process, and its faults."""

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError
from explorer.records.run_files import TraceLines
from explorer.records.trace import TIMING_FIELDS
from explorer.run.runner import ExplorationRun
from explorer.team.redis_store import RedisRun
from nodes.interfaces import StepReport
from perception.base import Message
from tests.support.paths import ROOT, WORLDS

pytest_plugins = ("tests.support.redis_server",)
MAIN = str(ROOT / "main.py")
RUN_TIMES = ("wall_seconds", "startup", "store")  # a summary's own clock, and the store it was kept in


def comparable(run_dir):
    """(trace, summary) without what the wall clock decides."""
    trace = [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in list(TraceLines(run_dir / "trace.jsonl"))]
    summary = json.loads((run_dir / "summary.json").read_text())
    return trace, {k: v for k, v in summary.items() if k not in RUN_TIMES}


def one_process_run(run_dir, embedder, **settings):
    ExplorationRun(RunConfig.of(run_dir=run_dir, verbosity=-1, **settings).check(), embedder=embedder).execute()
    return comparable(run_dir)


def start(run_dir, *args):
    return subprocess.Popen(
        [sys.executable, MAIN, "--run-dir", str(run_dir), "-q", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_lines(run_dir, count, process):
    trace = run_dir / "trace.jsonl"
    deadline = time.monotonic() + 120
    while not trace.exists() or len(trace.read_text().splitlines()) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.1)


def error_line(stderr):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("main.py: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


# ---- the same run, however it is split ---------------------------------------------------------------


def test_four_agents_split_two_and_two_over_processes_run_as_one_process(tmp_path, embedder, redis_server, run_id):
    settings = ["--agents", "4", "--steps", "10", "--world", "office", "--seed", "3"]
    team = [*settings, "--store", redis_server.url, "--run-id", run_id]
    first = start(tmp_path / "first", *team, "--local-agents", "Agent1,Agent2")
    second = start(tmp_path / "second", *team, "--local-agents", "Agent4,Agent3")
    for process in (first, second):
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
    alone = one_process_run(tmp_path / "alone", embedder, agents=4, steps=10, world=WORLDS / "office.yaml", seed=3)
    assert comparable(tmp_path / "first") == comparable(tmp_path / "second") == alone
    assert len(alone[0]) == 40 and alone[1]["messages_sent"] > 0  # the agents talked across processes
    # Each process keeps its own agents' memories.
    assert sorted(p.name for p in (tmp_path / "first" / "memory").iterdir()) == ["Agent1", "Agent2"]
    assert sorted(p.name for p in (tmp_path / "second" / "memory").iterdir()) == ["Agent3", "Agent4"]


def test_an_event_driven_team_with_a_coordinator_split_in_two_runs_as_one(tmp_path, embedder, redis_server, run_id):
    profiles = tmp_path / "profiles.yaml"
    profiles.write_text(
        "default: {msg_delay: 1}\n"
        "agents:\n"
        "  - {tick_interval: 1, obs_delay: 1}\n"
        "  - {tick_interval: 2, act_delay: 1}\n"
        "  - {tick_interval: 3}\n"
    )
    settings = dict(
        agents=3,
        steps=12,
        world=WORLDS / "warehouse.yaml",
        seed=5,
        schedule="event",
        profiles=profiles,
        coordinator="offline",
    )
    alone = one_process_run(tmp_path / "alone", embedder, **settings)
    runs = [
        ExplorationRun(
            RunConfig.of(
                run_dir=tmp_path / name,
                verbosity=-1,
                store=redis_server.url,
                run_id=run_id,
                local_agents=local,
                **settings,
            ).check(),
            embedder=embedder,
        )
        for name, local in (("first", ("Agent1",)), ("second", ("Agent2", "Agent3")))
    ]
    threads = [threading.Thread(target=run.execute) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert comparable(tmp_path / "first") == comparable(tmp_path / "second") == alone
    assert alone[1]["coordinator"]["directives_sent"] > 0  # the Coordinator ran beside Agent1, directing all


# ---- joining -----------------------------------------------------------------------------------------


def test_an_agent_that_does_not_join_in_time_is_named_and_the_run_exits_1(tmp_path, redis_server, run_id):
    process = start(
        tmp_path / "run",
        "--agents",
        "3",
        "--store",
        redis_server.url,
        "--run-id",
        run_id,
        "--local-agents",
        "Agent1",
        "--join-timeout",
        "1",
    )
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "Agent2, Agent3 did not join run" in error_line(stderr)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "failed"


def test_joining_refuses_other_arguments_a_taken_agent_and_an_ended_run(redis_server, run_id):
    run = RedisRun(redis_server.url, run_id)
    run.claim("one", ["Agent1"], {"seed": 42, "agents": 2})
    with pytest.raises(ConfigError, match=r"seed is 7, but run .* has 42"):
        RedisRun(redis_server.url, run_id).claim("two", ["Agent2"], {"seed": 7, "agents": 2})
    with pytest.raises(ConfigError, match="Agent1 has already joined"):
        run.claim("two", ["Agent1"], {"seed": 42, "agents": 2})
    run.claim("two", ["Agent2"], {"seed": 42, "agents": 2})
    assert run.members() == {"Agent1": "one", "Agent2": "two"}
    run.end("one")
    with pytest.raises(ConfigError, match="already ended: give this team a new --run-id"):
        run.claim("three", ["Agent2"], {"seed": 42, "agents": 2})


def test_keys_expire_a_day_after_but_a_heartbeat_lives_seconds(redis_server, run_id):
    run = RedisRun(redis_server.url, run_id)
    run.claim("one", ["Agent1"], {"seed": 42})
    run.beat("one", 5)
    run.expire()  # as a running process refreshes every key
    assert 0 < run.client.pttl(run.key("alive:one")) <= 5000  # or a dead process would never fall silent
    assert 23 * 3600 < run.client.ttl(run.key("members")) <= 24 * 3600
    assert run.silent(["one", "two"]) == ["two"]
    run.end("one")  # a process that finished is never silent
    run.client.delete(run.key("alive:one"))
    assert run.silent(["one"]) == []


@pytest.mark.parametrize(
    "args, words",
    [
        (["--local-agents", "Agent1"], ["--local-agents", "need --store"]),
        (["--store", "redis://127.0.0.1:9/0", "--local-agents", "Agent1"], ["--run-id"]),
        (
            ["--store", "redis://127.0.0.1:9/0", "--run-id", "x", "--local-agents", "Agent7"],
            ["Agent7", "not in this team"],
        ),
        (["--store", "http://127.0.0.1:9/0"], ["--store must be a Redis URL"]),
        (["--store", "redis://:hunter2@127.0.0.1:9/0"], ["cannot reach Redis", "redis://127.0.0.1:9/0"]),
    ],
)
def test_split_arguments_are_checked_in_one_line(tmp_path, args, words):
    result = subprocess.run(
        [sys.executable, MAIN, "--run-dir", str(tmp_path / "run"), *args], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    line = error_line(result.stderr)
    assert all(word in line for word in words), line
    assert "hunter2" not in result.stderr + result.stdout
    assert not (tmp_path / "run").exists()


# ---- the store's changes, made once ------------------------------------------------------------------


def test_each_change_is_made_once_whichever_process_makes_it_first(redis_server, run_id):
    """Two processes' stores make the same changes in the same order, as a split team's processes do."""
    stores = [RedisRun(redis_server.url, run_id).store() for _ in range(2)]
    step = [
        StepReport("Agent1", 1, None, ["lamp"], [Message("Agent1", "all", "lamp here", 1)], {"position": [1, 0, 0]}),
        StepReport("Agent2", 1, None, ["lamp", "sofa"], [], {"position": [2, 0, 0]}),
    ]
    for store in stores:
        store.register_agent("Agent1", {"position": [0, 0, 0]})
    stores[1].register_agent("Agent2", {"position": [0, 0, 0]})  # the second process is ahead
    assert stores[1].commit_step(step) == [["lamp"], ["sofa"]]
    stores[0].register_agent("Agent2", {"position": [0, 0, 0]})
    assert stores[0].commit_step(step) == [["lamp"], ["sofa"]]  # the result of the commit already made
    assert [m.message for m in stores[0].history()] == ["lamp here"]
    assert [m.message for m in stores[1].read_mailbox("Agent2")] == ["lamp here"]
    assert stores[0].objects() == ["lamp", "sofa"]


# ---- faults ------------------------------------------------------------------------------------------


def start_pair(tmp_path, redis_url, run_id, *more):
    team = ["--agents", "2", "--steps", "400", "--store", redis_url, "--run-id", run_id, *more]
    return (
        start(tmp_path / "first", *team, "--local-agents", "Agent1"),
        start(tmp_path / "second", *team, "--local-agents", "Agent2"),
    )


def committed(run_dir):
    """The summary, checked against the trace: every step handed in is on record, the last round maybe in part."""
    trace = list(TraceLines(run_dir / "trace.jsonl"))
    summary = json.loads((run_dir / "summary.json").read_text())
    last = {agent_id: max(r["step"] for r in trace if r["agent_id"] == agent_id) for agent_id in ("Agent1", "Agent2")}
    assert summary["steps"] == last and max(last.values()) - min(last.values()) <= 1
    assert [r["step"] for r in trace] == sorted(r["step"] for r in trace)
    return summary


def test_a_killed_process_stops_its_team_within_seconds_keeping_every_committed_step(tmp_path, redis_server, run_id):
    first, second = start_pair(tmp_path, redis_server.url, run_id)
    wait_for_lines(tmp_path / "first", 10, first)
    second.kill()
    killed = time.monotonic()
    _, stderr = first.communicate(timeout=60)
    assert time.monotonic() - killed < 20  # not an endless wait: the run had minutes to go
    assert first.returncode == 1
    assert "Agent2 went silent" in error_line(stderr)
    summary = committed(tmp_path / "first")
    assert summary["status"] == "failed" and "Agent2 went silent" in summary["error"]


def test_ctrl_c_in_one_process_stops_the_whole_team(tmp_path, redis_server, run_id):
    first, second = start_pair(tmp_path, redis_server.url, run_id)
    wait_for_lines(tmp_path / "second", 10, second)
    first.send_signal(signal.SIGINT)
    for process, name in ((first, "first"), (second, "second")):
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert "Traceback" not in stderr
        assert committed(tmp_path / name)["status"] == "interrupted"


def test_redis_going_away_mid_run_stops_the_run_in_one_line(tmp_path, own_redis_server):
    server = own_redis_server
    process = start(tmp_path / "run", "--agents", "2", "--steps", "400", "--store", server.url)
    wait_for_lines(tmp_path / "run", 10, process)
    server.stop()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert f"lost the team store at {server.url}" in error_line(stderr)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["steps"]["Agent1"] >= 5
    assert len(list(TraceLines(tmp_path / "run" / "trace.jsonl"))) >= 10
