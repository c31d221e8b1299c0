"""A run directory from elsewhere (a tarball, a copy) read by --recover, --report and --resume-memory:
planted links are not written through, files that are not regular files are refused, a damaged trace
line is skipped and counted, damaged files give one line, and the report's memory stays flat. What reads a device or
a FIFO is a process of its own, its address space bounded; the rest runs in this process."""

import json
import os
import re
import resource
import shutil
import tracemalloc

import pytest

from explorer.records.run_files import world_of
from explorer.report import run_report, trace_views
from explorer.report.run_report import write_report
from perception.families.generate import open_world
from perception.world import SHIPPED_WORLDS
from tests.support.in_process import main_here
from tests.test_cli import assert_one_line_error, main

ADDRESS_SPACE = 2 * 2**30  # a --recover, --report or --resume-memory run needs far less; /dev/zero read whole, more


def limited_memory():
    """A child's address space bounded: a reader that reads without bound fails, not the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A mock run of 2 agents and 5 steps, with its summary, report and saved memories."""
    run_dir = tmp_path_factory.mktemp("files") / "run"
    result = main("--agents", "2", "--steps", "5", "--world", "office", "--run-dir", str(run_dir), "-q")
    assert result.returncode == 0, result.stderr
    return run_dir


def copy_of(finished, tmp_path, keep=("config.json", "trace.jsonl", "summary.json")):
    """A copy of the finished run holding only `keep` (a killed run: no summary.json, no memory)."""
    run_dir = tmp_path / "copy"
    run_dir.mkdir()
    for name in keep:
        shutil.copy(finished / name, run_dir / name)
    return run_dir


def trace_lines(run_dir):
    return (run_dir / "trace.jsonl").read_text().splitlines(keepends=True)


RESUME = ("--agents", "2", "--steps", "1", "--resume-memory")


def resume(source, tmp_path):
    """A run resuming the memories of `source`, in a process of its own whose address space is bounded."""
    return main(*RESUME, str(source), "--run-dir", str(tmp_path / "next"), "-q", preexec_fn=limited_memory)


def resume_here(in_process, source, tmp_path):
    """A run resuming the memories of `source`, in this process: for a source with no device or FIFO in it."""
    return in_process.run(*RESUME, str(source), "--run-dir", str(tmp_path / "next"), "-q")


# 4. Temporary files are created exclusively: a link planted under a temporary's name is not followed.


def test_a_planted_partial_link_is_not_written_through_by_report_or_recover(finished, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    run_dir = copy_of(finished, tmp_path, keep=("config.json", "trace.jsonl"))
    for name in ("summary.json.partial", "report.html.partial"):
        (run_dir / name).symlink_to(victim)
    assert main_here("--recover", str(run_dir)).returncode == 0
    (run_dir / "report.html").symlink_to(victim)  # the page itself a link: replaced, not written through
    result = main_here("--report", str(run_dir))
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "completed"
    assert not (run_dir / "report.html").is_symlink() and "<html" in (run_dir / "report.html").read_text()
    assert sorted(p.name for p in run_dir.glob("*.partial")) == ["report.html.partial", "summary.json.partial"]


def test_a_screenshot_and_a_memory_save_are_not_written_through_a_planted_link(tmp_path, monkeypatch, embedder):
    import uuid

    from PIL import Image

    from memory.vector_memory import MemoryFileError, VectorMemory
    from perception.screenshots import save_png

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "shot.png.partial").symlink_to(victim)
    save_png(Image.new("RGB", (8, 8)), tmp_path / "shot.png")
    assert Image.open(tmp_path / "shot.png").size == (8, 8)
    fixed = uuid.UUID(int=7)  # the save's fresh names made known, to plant a link under one
    monkeypatch.setattr(uuid, "uuid4", lambda: fixed)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / f"index-{fixed.hex[:12]}.faiss").symlink_to(victim)
    memory = VectorMemory(embedder)
    memory.add("a memory", memory.embed("a memory"))
    with pytest.raises(MemoryFileError, match="cannot save the memory here"):
        memory.save(tmp_path / "memory")
    assert victim.read_text() == "precious\n"


# 7. Every file read is a regular file, and every read bounded.


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_trace_that_is_a_device_or_a_fifo_is_refused_by_recover(finished, tmp_path, kind):
    run_dir = copy_of(finished, tmp_path, keep=("config.json",))
    if kind == "device":
        (run_dir / "trace.jsonl").symlink_to("/dev/zero")
    else:
        os.mkfifo(run_dir / "trace.jsonl")
    expected = "a device" if kind == "device" else "a FIFO"
    result = main("--recover", str(run_dir), preexec_fn=limited_memory)
    assert_one_line_error(result, f"{run_dir / 'trace.jsonl'} is not a regular file ({expected})")


def test_a_memory_index_linked_to_dev_zero_is_refused_by_resume_memory(finished, tmp_path):
    source = tmp_path / "source"
    shutil.copytree(finished, source)
    saved = source / "memory" / "Agent1"
    index = saved / json.loads((saved / "meta.json").read_text())["index_file"]
    index.unlink()
    index.symlink_to("/dev/zero")
    assert_one_line_error(resume(source, tmp_path), str(index), "not a regular file")
    assert not (tmp_path / "next").exists()


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_config_whose_world_is_a_device_or_a_fifo_is_refused_by_report(finished, tmp_path, kind):
    run_dir = copy_of(finished, tmp_path)
    world = tmp_path / "world.yaml"
    if kind == "device":
        world.symlink_to("/dev/zero")
    else:
        os.mkfifo(world)
    config = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps({**config, "world": str(world)}))
    result = main("--report", str(run_dir), preexec_fn=limited_memory)
    assert_one_line_error(result, f"its world, {world}, is not a regular file")
    assert not (run_dir / "report.html").exists()


# 8. A damaged line in the middle of a trace is skipped and counted; the lines after it are kept.


def cut_line_4(run_dir):
    lines = trace_lines(run_dir)
    lines[3] = lines[3][:40] + "\n"
    (run_dir / "trace.jsonl").write_text("".join(lines))
    return len(lines)


def test_recover_skips_a_damaged_line_and_counts_it(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path, keep=("config.json", "trace.jsonl"))
    lines = cut_line_4(run_dir)
    result = main_here("--recover", str(run_dir))
    assert result.returncode == 0, result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["decisions"] == lines - 1 and summary["trace_lines_skipped"] == 1
    assert (
        result.stderr.strip() == f"main.py: warning: 1 damaged line of {run_dir / 'trace.jsonl'} was skipped (line 4)"
    )


def test_report_skips_a_damaged_line_and_says_so_on_the_page(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path)
    cut_line_4(run_dir)
    result = main_here("--report", str(run_dir))
    assert result.returncode == 0, result.stderr
    assert "warning: 1 damaged line of" in result.stderr
    html = (run_dir / "report.html").read_text()
    assert "1 damaged line of" in html and "was skipped (line 4)" in html
    panels = json.loads(re.search(r"const panels = (\[.*?\]);\n", html).group(1))
    assert [panel["label"] for panel in panels] == ["1", "2", "3", "4", "5"]  # every step, after line 4 too


def test_resume_memory_rebuilds_every_memory_but_a_damaged_lines(finished, tmp_path, in_process):
    source = copy_of(finished, tmp_path, keep=("config.json", "trace.jsonl"))
    lines = cut_line_4(source)
    result = resume_here(in_process, source, tmp_path)
    assert result.returncode == 0, result.stderr
    log = (tmp_path / "next" / "run.log").read_text()
    assert "1 damaged line of" in log and "was skipped (line 4)" in log
    counts = [int(n) for n in re.findall(r"Agent\d starts with (\d+) memories", log)]
    assert sum(counts) == lines - 1


def test_an_overlong_line_is_read_past_not_held(finished, tmp_path, monkeypatch):
    from explorer.records import run_files

    lines = trace_lines(finished)
    bound = max(len(line.encode()) for line in lines)
    monkeypatch.setattr(run_files, "MAX_LINE_BYTES", bound)
    monkeypatch.setattr(run_files, "_DISCARD_BYTES", bound // 7)  # read past in pieces
    long = json.dumps({"agent_id": "Agent1", "step": 99, "memory_text": "x" * bound * 3}) + "\n"
    (tmp_path / "trace.jsonl").write_text("".join(lines[:2] + [long] + lines[2:]))
    trace = run_files.TraceLines(tmp_path / "trace.jsonl")
    assert [record["step"] for record in trace] == [json.loads(line)["step"] for line in lines]
    assert (trace.skipped, trace.first_skipped) == (1, 3)


# 9. Damaged run files give one line and exit 2, never a traceback.


def damage(run_dir, name, how):
    path = run_dir / name
    if how == "binary":
        path.write_bytes(bytes(range(256)) * 40)
    elif how == "lines missing fields":
        path.write_text("".join(json.dumps({"trace_version": 2, "step": 1}) + "\n" for _ in range(3)))
    elif how == "lines not objects":
        path.write_text("[1, 2]\n3\n")
    elif how == "not JSON":
        path.write_text(path.read_text()[:-20])
    elif how == "of the wrong shape":
        path.write_text(json.dumps({"agents": 5, "agent_ids": "Agent1", "steps": "many"}))


TRACE_DAMAGE = ["binary", "lines missing fields", "lines not objects"]


@pytest.mark.parametrize("how", TRACE_DAMAGE)
@pytest.mark.parametrize("action", ["--recover", "--report", "--resume-memory"])
def test_a_damaged_trace_gives_one_line(finished, tmp_path, in_process, action, how):
    keep = ("config.json", "trace.jsonl") + (("summary.json",) if action == "--report" else ())
    run_dir = copy_of(finished, tmp_path, keep=keep)
    damage(run_dir, "trace.jsonl", how)
    result = (
        resume_here(in_process, run_dir, tmp_path) if action == "--resume-memory" else main_here(action, str(run_dir))
    )
    assert_one_line_error(result, f"{run_dir / 'trace.jsonl'}: none of its lines is a trace line")


@pytest.mark.parametrize("how", ["binary", "not JSON", "of the wrong shape"])
@pytest.mark.parametrize(
    "action, name", [("--recover", "config.json"), ("--report", "config.json"), ("--report", "summary.json")]
)
def test_a_damaged_config_or_summary_gives_one_line(finished, tmp_path, action, name, how):
    run_dir = copy_of(
        finished, tmp_path, keep=("config.json", "trace.jsonl", "summary.json")[: 3 if action == "--report" else 2]
    )
    damage(run_dir, name, how)
    what = "a run's settings" if name == "config.json" else "a run's summary"
    assert_one_line_error(main_here(action, str(run_dir)), f"{run_dir / name} is not {what}")


def game_run(run_dir, records, summary_steps=1):
    """A game run's files, as in test_report, with these trace records."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps({"mode": "unity", "agent_ids": ["Agent1"]}))
    (run_dir / "trace.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    llm = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None, "parse_failures": 0, "errors": 0}
    agent = {"policy": "offline", "steps": summary_steps, "found_first": [], "messages_sent": 0, "llm": llm}
    summary = {
        "status": "completed",
        "world": "Stand-in Game",
        "model": "offline",
        "agents": ["Agent1"],
        "steps": {"Agent1": summary_steps},
        "objects_discovered": [],
        "total_objects": None,
        "discovery_curve": [],
        "discoveries": {},
        "per_agent": {"Agent1": agent},
    }
    (run_dir / "summary.json").write_text(json.dumps(summary))


def game_record(step, image_path=None):
    pose = {"position": [step, 1, 0], "facing": "north"}
    return {"agent_id": "Agent1", "step": step, "time": step - 1, "pose": pose, "image_path": image_path}


def test_a_cut_short_screenshot_gives_one_line(tmp_path):
    from PIL import Image

    run_dir = tmp_path / "game"
    (run_dir / "screenshots").mkdir(parents=True)
    shot = run_dir / "screenshots" / "Agent1_step001.png"
    Image.new("RGB", (640, 360), (200, 30, 30)).save(shot)
    shot.write_bytes(shot.read_bytes()[:300])
    game_run(run_dir, [game_record(1, str(shot))])
    assert_one_line_error(main_here("--report", str(run_dir)), str(shot), "not a whole image")


def test_the_report_shows_only_the_runs_own_screenshots(tmp_path):
    from PIL import Image

    elsewhere = tmp_path / "private.png"  # a picture outside the run directory, which a trace may name
    Image.new("RGB", (64, 36), (0, 0, 0)).save(elsewhere)
    run_dir = tmp_path / "game"
    (run_dir / "screenshots").mkdir(parents=True)
    Image.new("RGB", (64, 36), (200, 30, 30)).save(run_dir / "screenshots" / "Agent1_step002.png")
    moved = "/somewhere/else/screenshots/Agent1_step002.png"  # a run directory moved since: found by name
    game_run(run_dir, [game_record(1, str(elsewhere)), game_record(2, moved)], 2)
    html = write_report(run_dir).path.read_text()
    assert html.count('src="data:image/jpeg;base64,') == 1


# 10. The report holds what the page shows, not the trace: bounded however long the run.


def long_mock_run(run_dir, steps):
    """A mock run of one agent walking `steps` cells of a 50-wide grid, saying something each step; its
    world file gone (the map drawn from the trace)."""
    run_dir.mkdir(parents=True)
    config = {"mode": "mock", "agent_ids": ["Agent1"], "world": str(run_dir / "gone.yaml")}
    (run_dir / "config.json").write_text(json.dumps(config))
    with open(run_dir / "trace.jsonl", "w") as trace:
        for step in range(1, steps + 1):
            cell = [step % 50, step // 50, 0]
            record = {**game_record(step), "pose": {"position": cell, "facing": "north"}, "seen_cells": [cell]}
            record["message_out"] = {"recipient": "all", "message": f"at {cell}"}
            trace.write(json.dumps(record) + "\n")
    llm = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None, "parse_failures": 0, "errors": 0}
    agent = {"policy": "offline", "steps": steps, "found_first": [], "messages_sent": steps, "llm": llm}
    summary = {
        "status": "completed",
        "world": "a moved world",
        "model": "offline",
        "agents": ["Agent1"],
        "steps": {"Agent1": steps},
        "objects_discovered": [],
        "total_objects": None,
        "discovery_curve": [[step, 0] for step in range(1, steps + 1)],
        "discoveries": {},
        "per_agent": {"Agent1": agent},
    }
    (run_dir / "summary.json").write_text(json.dumps(summary))


def test_a_long_runs_report_keeps_a_bounded_number_of_frames_trail_points_and_messages(tmp_path, monkeypatch):
    drawn = []  # the frames the map is drawn from
    monkeypatch.setattr(run_report, "replay_map", lambda div_id, world, frames, agents: drawn.extend(frames) or "")
    steps = 3000
    long_mock_run(tmp_path / "run", steps)
    html = write_report(tmp_path / "run").path.read_text()
    assert trace_views.MAX_FRAMES // 2 <= len(drawn) <= trace_views.MAX_FRAMES + 1
    assert drawn[0]["label"] == "1" and drawn[-1]["label"] == str(steps)  # the first step and the last
    assert drawn[-1]["poses"]["Agent1"][:2] == (steps % 50, steps // 50)
    assert max(len(frame["trails"]["Agent1"][0]) for frame in drawn) == trace_views.MAX_TRAIL
    assert "The replay shows every 16th of the run&#39;s 3,000 steps, and the last." in html
    assert html.count('<tr data-members="Agent1 all"><td class="num">') == trace_views.MAX_MESSAGES
    assert f"{steps - trace_views.MAX_MESSAGES} later messages are left out" in html


def test_a_long_game_runs_filmstrip_is_thinned(tmp_path):
    steps = 1000
    game_run(tmp_path / "game", [game_record(step) for step in range(1, steps + 1)], steps)
    html = write_report(tmp_path / "game").path.read_text()
    assert trace_views.MAX_PICTURES // 2 <= html.count("<figure>") <= trace_views.MAX_PICTURES + 1
    assert "Agent1, step 1</b>" in html and f"Agent1, step {steps}</b>" in html
    assert "The filmstrip shows every 8th of the run&#39;s 1,000 agent-steps, and the last." in html


def test_the_reports_memory_does_not_grow_with_the_traces_length(tmp_path):
    peaks = []
    for steps in (2000, 8000):
        long_mock_run(tmp_path / str(steps), steps)
        tracemalloc.start()
        write_report(tmp_path / str(steps))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # The trace of 8,000 lines is four times that of 2,000; held whole, it would add about 3 MB per 1,000 lines.
    assert peaks[1] < peaks[0] * 1.25, peaks


def test_a_runs_world_is_made_again_with_the_targets_it_was_given(tmp_path):
    # A generated house places --find's targets (and moves what they displace): the report's map and a
    # recovered summary need the world the run had, not the house without them.
    config = {"world": "gen:house", "world_seed": 3, "find": ["toothbrush", "laptop"]}
    again = world_of(config, tmp_path / "config.json")
    ran = open_world("gen:house", 3, ("toothbrush", "laptop"))
    assert again.objects == ran.objects and again.targets == ("toothbrush", "laptop")
    assert again.objects != open_world("gen:house", 3).objects
    shipped = world_of({"world": str(SHIPPED_WORLDS / "office.yaml"), "find": ["printer"]}, tmp_path / "config.json")
    assert shipped.targets == ("printer",)
