"""main.py as a user runs it: real processes, real exit codes."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from explorer.trace import read_trace
from tests.paths import ROOT

MAIN = str(ROOT / "main.py")


def main(*args, **kwargs):
    return subprocess.run([sys.executable, MAIN, *args], capture_output=True, text=True, timeout=300, **kwargs)


def assert_one_line_error(result, *words):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("main.py: error: ")
    assert "Traceback" not in result.stderr + result.stdout
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--agents", "0"], ["--agents must be at least 1"]),
        (["--agents", "-3"], ["--agents must be at least 1"]),
        (["--steps", "0"], ["--steps must be at least 1"]),
        (["--agents", "two"], ["--agents", "invalid int value"]),
        (["--mode", "vr"], ["unknown mode 'vr'"]),
        (["--mode", "unity"], ["--mode unity needs --window-title REGEX"]),
        (["--mode", "unity", "--window-title", "Game ("], ["'Game (' is not a valid regular expression"]),
        (["--mode", "unity", "--window-title", "G", "--agents", "3", "--region", "0,0,9,9", "--region", "9,0,9,9"],
         ["--region is given 2 times for 3 agents: give it once for all, or once per agent"]),
        (["--mode", "unity", "--window-title", "G", "--keymap", "no/such.yaml"], ["key map file not found: no/such.yaml"]),
        (["--mode", "unity", "--window-title", "G", "--region", "0,0,100"], ["argument --region: '0,0,100' is not X,Y,W,H"]),
        (["--mode", "unity", "--window-title", "G", "--region", "0,0,0,10"], ["W and H must be at least 2"]),
        (["--mode", "unity", "--window-title", "G", "--vision", "twice"], ["unknown --vision 'twice'"]),
        (["--window-title", "Game"], ["--window-title, --keymap, --region and --vision are for --mode unity"]),
        (["--world", "no/such/world.yaml"], ["world file not found", "no/such/world.yaml"]),
        (["--frobnicate"], ["unrecognized arguments: --frobnicate"]),
        (["--model", " "], ["--model must not be empty"]),
        (["-q", "-v"], ["not allowed with"]),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(args, words):
    assert_one_line_error(main(*args), *words)


@pytest.mark.parametrize(
    "text, words",
    [
        ("", ["is empty"]),
        ("name: x\nsize: [4, 4\n", ["invalid YAML at line 3"]),
        ("- just\n- a list\n", ["mapping"]),
        ("name: x\nsize: [4, 4]\nobjects:\n  - {name: cup, position: [9, 1]}\n", ["off the grid"]),
        ("name: x\nsize: [4, 4]\nwalls: [[1, 1]]\nobjects:\n  - {name: cup, position: [1, 1]}\n", ["inside a wall"]),
        (
            "name: x\nsize: [4, 4]\nobjects:\n  - {name: cup, position: [1, 1]}\n  - {name: cup, position: [2, 2]}\n",
            ["used twice"],
        ),
        (
            "name: x\nsize: [4, 4]\nobjects:\n  - {name: cup, position: [1, 1]}\nagents:\n  - {position: [0, 0], facing: up}\n",
            ["facing"],
        ),
        (
            "name: x\nsize: [4, 4]\nwalls: [[0, 0]]\nobjects:\n  - {name: cup, position: [1, 1]}\nagents:\n  - {position: [0, 0]}\n",
            ["agent 1", "inside a wall"],
        ),
    ],
)
def test_bad_world_files_give_one_line_naming_the_file_and_exit_2(tmp_path, text, words):
    world = tmp_path / "broken.yaml"
    world.write_text(text)
    result = main("--world", str(world), "--run-dir", str(tmp_path / "run"))
    assert_one_line_error(result, str(world), *words)
    assert not (tmp_path / "run").exists()


def test_a_run_directory_that_holds_a_run_is_refused(tmp_path):
    (tmp_path / "trace.jsonl").write_text("{}\n")
    assert_one_line_error(main("--run-dir", str(tmp_path)), "not empty")
    assert (tmp_path / "trace.jsonl").read_text() == "{}\n"


def test_help_describes_the_options():
    result = main("--help")
    assert result.returncode == 0
    for option in ("--mode", "--agents", "--steps", "--world", "--seed", "--model", "--api-base", "--no-comm", "--run-dir"):
        assert option in result.stdout


def test_the_main_command_runs_and_writes_its_run(tmp_path):
    run_dir = tmp_path / "run"
    result = main("--mode", "mock", "--agents", "2", "--steps", "4", "--run-dir", str(run_dir), "-q")
    assert result.returncode == 0, result.stderr
    assert "Run summary: apartment (completed)" in result.stdout
    assert f"Run directory: {run_dir}" in result.stdout
    assert "Traceback" not in result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["steps"] == {"Agent1": 4, "Agent2": 4}
    assert len(read_trace(run_dir / "trace.jsonl")) == 8
    assert json.loads((run_dir / "config.json").read_text())["agents"] == 2
    assert "Agent1 found" in (run_dir / "run.log").read_text()


def test_ctrl_c_keeps_finished_steps_writes_the_summary_and_exits_130(tmp_path):
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, MAIN, "--agents", "2", "--steps", "500", "--run-dir", str(run_dir), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A harness may start us with SIGINT ignored, which children inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    trace = run_dir / "trace.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not trace.exists() or len(trace.read_text().splitlines()) < 6):
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    records = read_trace(trace)  # every line is whole JSON
    assert len(records) >= 6
    assert summary["steps"]["Agent1"] == max(r["step"] for r in records if r["agent_id"] == "Agent1")
    assert summary["steps"]["Agent1"] < 500
    assert "interrupted" in stdout


def test_nothing_is_fetched_at_start_up(tmp_path):
    # No proxy can be reached and the hub is off: a download attempt would fail the run.
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    result = main("--agents", "1", "--steps", "1", "--run-dir", str(tmp_path / "run"), "-q", env=env)
    assert result.returncode == 0, result.stderr
