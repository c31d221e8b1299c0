"""A killed run is not lost: its summary and its agents' memories are rebuilt from its trace. The runs killed or still
going are processes of their own; the others, and --recover, run in this process (tests/support/in_process.py)."""

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.run_files import TraceLines
from explorer.run.recover import recover_summary
from explorer.run.runner import ExplorationRun
from explorer.schedule.catalogue import SCHEDULES
from explorer.team.topologies import TOPOLOGIES
from explorer.testing.chat_server import ChatServer, error
from explorer.testing.hash_embedder import HashEmbedder
from nodes.record import RELAYED_KEPT
from tests.support.in_process import main_here
from tests.support.old_traces import as_version_1, rewrite_trace
from tests.support.paths import ROOT, WORLDS
from tests.test_cli import assert_one_line_error

MAIN = str(ROOT / "main.py")


@pytest.mark.parametrize(
    "setting",
    [
        ("--world", "office"),
        ("--world", "office", "--schedule", "event", "--coordinator", "offline", "--profiles", "PROFILES"),
        # A search on a generated world: --find places the targets, so the world is made again with them.
        ("--world", "gen:house", "--world-seed", "3", "--find", "toothbrush,laptop"),
    ],
)
def test_the_summary_rebuilt_from_a_trace_is_the_one_the_run_wrote(tmp_path, setting, in_process):
    run_dir = tmp_path / "run"
    profiles = tmp_path / "timings.yaml"  # mixed intervals and delays, and messages the run ends before
    profiles.write_text(
        "default: {msg_delay: 2}\nagents: [{tick_interval: 2}, {act_delay: 1}]\ncoordinator: {tick_interval: 3}\n"
    )
    setting = [str(profiles) if arg == "PROFILES" else arg for arg in setting]
    clock = "--schedule" in setting
    agents, steps = ("4", "20") if clock else ("3", "12")  # on the event clock, messages still on their way at the end
    assert (
        in_process.run("--agents", agents, "--steps", steps, "--run-dir", str(run_dir), "-q", *setting).returncode == 0
    )
    written = json.loads((run_dir / "summary.json").read_text())
    (run_dir / "summary.json").unlink()
    result = main_here("--recover", str(run_dir))
    assert result.returncode == 0, result.stderr
    assert "Rebuilt" in result.stdout
    rebuilt = json.loads((run_dir / "summary.json").read_text())
    assert rebuilt.pop("recovered_from_trace") is True and rebuilt.pop("wall_seconds") is None
    assert rebuilt.pop("trace_lines_skipped") == 0
    for key in ("wall_seconds", "startup"):
        written.pop(key)
    assert rebuilt.pop("startup") is None
    assert rebuilt["store"].pop("commit_ms") is None and written["store"].pop("commit_ms")["p50"] > 0
    assert rebuilt == written
    if clock:
        assert written["coordinator"]["directives_sent"] > 0 and written["messages"]["never_delivered"] > 0
        assert written["team"]["late_actions"] > 0  # the act_delay's: landed after their steps were recorded
    if "--find" in setting:
        assert written["search"]["targets"] == ["toothbrush", "laptop"]
        assert set(written["search"]["spl_by_target"]) == {"toothbrush", "laptop"}  # the world made again
    assert written["team"]["distance"] == sum(a["distance"] or 0 for a in written["per_agent"].values()) > 0


def team_settings(topology: str, schedule: str) -> dict | None:
    """A small run's settings on `topology` and `schedule`, with the hierarchy the topology routes through;
    None where the two do not go together."""
    comm, kind = TOPOLOGIES[topology], SCHEDULES[schedule]
    if comm.through_directors and kind.one_process:
        return None  # the coordinators the topology routes through are not run on one process's schedule
    settings = {"agents": 4, "steps": 12, "world": WORLDS / "office.yaml", "comm": topology}
    if comm.through_directors:
        settings["coordinator"] = "offline"
    if comm.system_agent:
        settings["coordinators"] = 2
    return settings


TEAMS = [(t, s) for t in TOPOLOGIES for s in SCHEDULES if team_settings(t, s) is not None]
TIMINGS = (  # messages still on their way at the end: on the delay, and on the think time before it
    "default: {msg_delay: 1.7, think_time: 0.5}\nagents: [{tick_interval: 2}, {act_delay: 1}]\n"
    "coordinator: {tick_interval: 3, msg_delay: 1}\n"
)


@pytest.mark.parametrize(("topology", "schedule"), TEAMS)
def test_recover_counts_what_the_run_counted_on_every_topology_and_schedule(tmp_path, topology, schedule):
    settings = team_settings(topology, schedule)
    if SCHEDULES[schedule].timed_profiles:
        (tmp_path / "timings.yaml").write_text(TIMINGS)
        settings["profiles"] = tmp_path / "timings.yaml"
    run_dir = tmp_path / "run"
    config = RunConfig.of(run_dir=run_dir, verbosity=-1, schedule=schedule, **settings).check()
    written = ExplorationRun(config, embedder=HashEmbedder()).execute()
    (run_dir / "summary.json").unlink()
    recovered = recover_summary(run_dir)
    assert recovered.warnings == []
    rebuilt = recovered.summary
    for summary in (written, rebuilt):
        for key in ("wall_seconds", "startup", "store", "recovered_from_trace", "trace_lines_skipped"):
            summary.pop(key, None)
    assert rebuilt == written
    assert (written["messages_sent"] > 0) == TOPOLOGIES[topology].messages
    if TOPOLOGIES[topology].through_directors:  # the explorers' messages reached each other only as relayed
        lines = list(TraceLines(run_dir / "trace.jsonl"))
        assert any(line.get("relayed") for line in lines) and written["messages_sent"] > written["messages"]["sent"]


def test_recover_says_so_where_a_tick_passed_on_more_than_its_trace_line_keeps(tmp_path):
    run_dir = tmp_path / "run"
    config = RunConfig.of(run_dir=run_dir, verbosity=-1, **team_settings("star", "lockstep")).check()
    ExplorationRun(config, embedder=HashEmbedder()).execute()
    (run_dir / "summary.json").unlink()

    def crowded(line):  # a tick whose first message passed on went to as many recipients as a line keeps
        if not line.get("relayed"):
            return line
        first = {**line["relayed"][0], "to": [f"Agent{k}" for k in range(RELAYED_KEPT)]}
        return {**line, "relayed": [first, *line["relayed"][1:]]}

    rewrite_trace(run_dir, crowded)
    (warning,) = recover_summary(run_dir).warnings
    assert "of the ticks may have passed on more" in warning and "may be fewer than the run's" in warning


def test_recover_refuses_a_run_that_has_its_summary_and_a_directory_that_holds_no_run(tmp_path, in_process):
    run_dir = tmp_path / "run"
    in_process.run("--steps", "1", "--run-dir", str(run_dir), "-q")
    assert_one_line_error(main_here("--recover", str(run_dir)), "already has its summary.json")
    assert_one_line_error(main_here("--recover", str(tmp_path)), "holds no run to recover")


def test_a_killed_run_is_recovered_and_its_memories_resumed_from_its_trace(tmp_path, in_process):
    killed = tmp_path / "killed"
    process = subprocess.Popen(
        [sys.executable, MAIN, "--agents", "2", "--steps", "500", "--run-dir", str(killed), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    trace = killed / "trace.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not trace.exists() or len(trace.read_text().splitlines()) < 10):
        time.sleep(0.1)
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    assert not (killed / "summary.json").exists() and not (killed / "memory").exists()
    lines = len(trace.read_text().splitlines())

    assert main_here("--recover", str(killed)).returncode == 0
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["status"] == "interrupted" and sum(summary["steps"].values()) >= 10

    resumed = tmp_path / "resumed"
    result = in_process.run(
        "--agents", "2", "--steps", "1", "--run-dir", str(resumed), "--resume-memory", str(killed), "-q"
    )
    assert result.returncode == 0, result.stderr
    assert "rebuilt from its trace.jsonl" in (resumed / "run.log").read_text()
    saved = {a: json.loads((resumed / "memory" / a / "meta.json").read_text())["count"] for a in ("Agent1", "Agent2")}
    assert sum(saved.values()) >= lines + 2 - 1  # every whole line of the killed run, plus this run's step each


def test_a_run_still_going_is_not_recovered_nor_replayed_and_its_report_says_it_is_partial(tmp_path):
    live = tmp_path / "live"
    process = subprocess.Popen(
        [sys.executable, MAIN, "--agents", "2", "--steps", "100000", "--run-dir", str(live), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        trace = live / "trace.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not trace.exists() or len(trace.read_text().splitlines()) < 6):
            time.sleep(0.1)
        assert_one_line_error(main_here("--recover", str(live)), "is a run still going")
        assert not (live / "summary.json").exists()
        replayed = main_here("--steps", "1", "--run-dir", str(tmp_path / "replay"), "--replay-replies", str(live))
        assert_one_line_error(replayed, "--replay-replies", "is a run still going")
        report = main_here("--report", str(live))
        assert report.returncode == 0, report.stderr
        assert "still going: this report is partial" in report.stderr and "Wrote" in report.stdout
        page = (live / "report.html").read_text()
        assert "(running)</span>" in page and "The run is still going." in page
        assert not (live / "summary.json").exists()  # the summary is the run's to write
    finally:
        process.kill()
        process.wait(30)
    # Killed, it is a run to recover, once.
    assert main_here("--recover", str(live)).returncode == 0
    summary = json.loads((live / "summary.json").read_text())
    assert summary["status"] == "interrupted" and sum(summary["steps"].values()) >= 6
    assert_one_line_error(main_here("--recover", str(live)), "already has its summary.json")


GOOD_REPLY = "```yaml\naction: look_left\nreason: scan\n```"
ENDINGS = {  # how a run ends before its steps are spent: the settings that end it so
    "all-found": {"agents": 3, "steps": 60, "world": WORLDS / "office.yaml", "stop_when": "all-found"},
    "targets-found": {"agents": 3, "steps": 80, "world": Path("gen:house"), "world_seed": 3, "find": ("toothbrush",)},
    "max_calls": {"agents": 2, "steps": 8, "model": "openai/test-model", "max_calls": 5},
    "max_tokens": {"agents": 2, "steps": 8, "model": "openai/test-model", "max_tokens": 360},
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_run_that_ended_before_its_steps_were_spent_is_recovered_with_what_ended_it(tmp_path, embedder, ending):
    run_dir = tmp_path / "run"
    with ChatServer(lambda request: GOOD_REPLY) as server:
        config = RunConfig.of(run_dir=run_dir, verbosity=-1, api_base=server.api_base, **ENDINGS[ending])
        written = ExplorationRun(config.check(), embedder=embedder).execute()
    assert ending in (written["ended_by"], written["budget"]["exhausted"])
    (run_dir / "summary.json").unlink()
    rebuilt = recover_summary(run_dir).summary  # in this process too: the run let go of its directory
    for summary in (written, rebuilt):
        for key in ("wall_seconds", "startup", "store", "recovered_from_trace", "trace_lines_skipped"):
            summary.pop(key, None)
    assert rebuilt == written


def test_a_cut_last_line_is_left_out(tmp_path, in_process):
    run_dir = tmp_path / "run"
    in_process.run("--agents", "2", "--steps", "3", "--run-dir", str(run_dir), "-q")
    (run_dir / "summary.json").unlink()
    shutil.rmtree(run_dir / "memory")
    text = (run_dir / "trace.jsonl").read_text()
    (run_dir / "trace.jsonl").write_text(text + text.splitlines()[0][:50])  # a kill mid-write
    assert main_here("--recover", str(run_dir)).returncode == 0
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "completed"


def model_run(in_process, run_dir):
    """A model run of 2 agents and 4 steps whose calls give every kind of record: a reply refused and
    asked again, a call that failed, and good replies; its summary as it wrote it."""

    def answer(request):
        prompt = request["messages"][-1]["content"]
        if "You are Agent1," in prompt and "## Step 2 of" in prompt:
            return error(404, "no such model today")
        if "## Step 3 of" in prompt and "could not be used" not in prompt:
            return "action: fly"
        return "```yaml\naction: look_left\nreason: scan\n```"

    with ChatServer(answer) as server:  # in this process: the run is the point here, not the process
        result = in_process.run(
            "--agents",
            "2",
            "--steps",
            "4",
            "--model",
            "openai/test-model",
            "--api-base",
            server.api_base,
            "--run-dir",
            str(run_dir),
            "-q",
        )
    assert result.returncode == 0, result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    (run_dir / "summary.json").unlink()
    return summary


def test_a_version_1_trace_is_recovered_to_the_summary_the_run_wrote(in_process, tmp_path):
    run_dir = tmp_path / "run"
    written = model_run(in_process, run_dir)
    assert (
        written["llm"]["failed_calls"] == 1 and written["llm"]["parse_failures"] == 0 and written["llm"]["calls"] == 10
    )
    rewrite_trace(run_dir, as_version_1)
    assert main_here("--recover", str(run_dir)).returncode == 0
    rebuilt = json.loads((run_dir / "summary.json").read_text())
    assert rebuilt["trace_lines_skipped"] == 0  # every version-1 line read, model calls and all
    for summary in (written, rebuilt):
        for key in ("wall_seconds", "startup", "store", "recovered_from_trace", "trace_lines_skipped"):
            summary.pop(key, None)
        # Version 1 kept no reply format: its calls read as YAML, as every call then was.
        for llm in [summary["llm"], *(agent["llm"] for agent in summary["per_agent"].values())]:
            llm["yaml_calls"] += llm.pop("json_calls")
    assert rebuilt == written


def test_a_trace_of_an_unknown_version_is_not_recovered(tmp_path, in_process):
    run_dir = tmp_path / "run"
    in_process.run("--steps", "1", "--run-dir", str(run_dir), "-q")
    (run_dir / "summary.json").unlink()
    rewrite_trace(run_dir, lambda line: {**line, "trace_version": 99})
    assert_one_line_error(
        main_here("--recover", str(run_dir)),
        f"{run_dir / 'trace.jsonl'}: trace_version 99 is not one this program reads (versions 1 to 2)",
    )


def test_a_run_on_a_world_file_given_by_a_relative_path_is_recovered_from_any_folder(tmp_path, in_process):
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    shutil.copy(ROOT / "perception" / "worlds" / "office.yaml", here / "mine.yaml")
    assert in_process.run("--world", "mine.yaml", "--steps", "2", "--run-dir", "run", "-q", cwd=here).returncode == 0
    run_dir = here / "run"
    assert json.loads((run_dir / "config.json").read_text())["world"] == str(here / "mine.yaml")
    written = json.loads((run_dir / "summary.json").read_text())
    (run_dir / "summary.json").unlink()
    assert main_here("--recover", str(run_dir), cwd=elsewhere).returncode == 0
    assert json.loads((run_dir / "summary.json").read_text())["total_objects"] == written["total_objects"]
