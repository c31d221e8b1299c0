"""main.py as a user runs it: real processes, real exit codes; the refusals and runs whose point is not the
process in this one (tests/support/in_process.py), with a few refusals checked in a real process too."""

import gc
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from explorer.records.run_files import TraceLines
from tests.support.in_process import main_here
from tests.support.paths import ROOT

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
        (["--agents", "0"], ["--agents must be from 1 to 1000"]),
        (["--agents", "-3"], ["--agents must be from 1 to 1000"]),
        (["--agents", "1001"], ["--agents must be from 1 to 1000, not 1001"]),
        (["--steps", "0"], ["--steps must be at least 1"]),
        (["--agents", "two"], ["--agents", "invalid int value"]),
        (["--mode", "vr"], ["unknown mode 'vr'"]),
        (["--mode", "unity"], ["--mode unity needs --window-title REGEX"]),
        (["--mode", "unity", "--window-title", "Game ("], ["'Game (' is not a valid regular expression"]),
        (
            ["--mode", "unity", "--window-title", "G", "--agents", "3", "--region", "0,0,9,9", "--region", "9,0,9,9"],
            ["--region is given 2 times for 3 agents: give it once for all, or once per agent"],
        ),
        (
            ["--mode", "unity", "--window-title", "G", "--keymap", "no/such.yaml"],
            ["key map file not found: no/such.yaml"],
        ),
        (
            ["--mode", "unity", "--window-title", "G", "--region", "0,0,100"],
            ["argument --region: '0,0,100' is not X,Y,W,H"],
        ),
        (["--mode", "unity", "--window-title", "G", "--region", "0,0,0,10"], ["W and H must be at least 2"]),
        (["--mode", "unity", "--window-title", "G", "--vision", "twice"], ["unknown --vision 'twice'"]),
        (
            ["--window-title", "Game"],
            ["--window-title, --keymap, --region, --vision and --pause-key are for --mode unity"],
        ),
        (["--pause-key", "p"], ["--window-title, --keymap, --region, --vision and --pause-key are for --mode unity"]),
        (["--world", "no/such/world.yaml"], ["world file not found", "no/such/world.yaml"]),
        (["--frobnicate"], ["unrecognized arguments: --frobnicate"]),
        (["--model", " "], ["--model must not be empty"]),
        (["-q", "-v"], ["not allowed with"]),
        (
            ["--timeout", "inf"],
            ["--timeout must be a number of seconds more than 0 and at most 86400 (a day), not inf"],
        ),
        # Accepted once, then every call failed with a "connection error" (a client library's own limit).
        (["--timeout", "1e10"], ["--timeout must be a number of seconds more than 0 and at most 86400"]),
        (["--join-timeout", "1e10"], ["--join-timeout must be a number of seconds more than 0 and at most 86400"]),
        (["--price-in", "nan"], ["--price-in must be a number of dollars, 0 or more, not nan"]),
        (["--price-out=-inf"], ["--price-out must be a number of dollars"]),
        (["--world", "tests"], ["--world tests is a directory, not a world file"]),
        (["--decide", "plans"], ["argument --decide: invalid choice: 'plans'"]),
        (["--mode", "unity", "--window-title", "G", "--decide", "goals"], ["--decide goals needs --mode mock"]),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(args, words):
    assert_one_line_error(main_here(*args), *words)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--agents", "0"], ["--agents must be from 1 to 1000"]),
        (["--frobnicate"], ["unrecognized arguments: --frobnicate"]),
        (["--world", "no/such/world.yaml"], ["world file not found", "no/such/world.yaml"]),
    ],
)
def test_the_program_itself_refuses_in_one_line_and_exits_2(args, words):
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
        (
            "name: x\nsize: [100000, 100000]\nobjects:\n  - {name: cup, position: [1, 1]}\n",
            ["more than 1,000,000 cells"],
        ),
        ("name: x\nsize: [8, 6]\nview_distance: 1000\nobjects:\n  - {name: cup, position: [1, 1]}\n", ["at most 50"]),
        (
            "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
            + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))
            + "name: x\nsize: *i\n",
            ["expands to more than 1,000,000 values"],
        ),
    ],
)
def test_bad_world_files_give_one_line_naming_the_file_and_exit_2(tmp_path, text, words):
    world = tmp_path / "broken.yaml"
    world.write_text(text)
    result = main_here("--world", str(world), "--run-dir", str(tmp_path / "run"))
    assert_one_line_error(result, str(world), *words)
    assert not (tmp_path / "run").exists()


def test_a_run_directory_that_holds_a_run_is_refused(tmp_path):
    (tmp_path / "trace.jsonl").write_text("{}\n")
    assert_one_line_error(main_here("--run-dir", str(tmp_path)), "not empty")
    assert (tmp_path / "trace.jsonl").read_text() == "{}\n"


def test_help_describes_the_options():
    result = main("--help")
    assert result.returncode == 0
    for option in (
        "--mode",
        "--agents",
        "--steps",
        "--world",
        "--seed",
        "--model",
        "--api-base",
        "--no-comm",
        "--run-dir",
    ):
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
    assert len(list(TraceLines(run_dir / "trace.jsonl"))) == 8
    assert json.loads((run_dir / "config.json").read_text())["agents"] == 2
    log = (run_dir / "run.log").read_text()
    assert "] Agent1 found" in log  # the thread's name is bracketed, apart from what it says
    assert log.splitlines()[-1].endswith(
        f"Run completed after 8 agent-steps: {len(summary['objects_discovered'])} of 12 objects found"
    )


def test_a_key_in_the_api_base_never_reaches_the_run_directory(tmp_path, in_process):
    run_dir = tmp_path / "run"
    api_base = "http://someone:hunter2secret@127.0.0.1:9/v1?api_key=sk-querysecret"
    result = in_process.run("--steps", "1", "--run-dir", str(run_dir), "-q", "--api-base", api_base)
    assert result.returncode == 0, result.stderr
    assert json.loads((run_dir / "config.json").read_text())["api_base"] == "http://***@127.0.0.1:9/v1?api_key=***"
    written = "".join(path.read_text(errors="replace") for path in run_dir.rglob("*") if path.is_file())
    assert "hunter2secret" not in written and "querysecret" not in written


def start(run_dir, *args):
    return subprocess.Popen(
        [sys.executable, MAIN, "--agents", "2", "--steps", "500", "--run-dir", str(run_dir), "-q", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A harness may start us with SIGINT ignored, which children inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.parametrize(
    "signals",
    [
        [signal.SIGINT],
        [signal.SIGTERM],
        [signal.SIGHUP],
        [signal.SIGINT] * 6,
        [signal.SIGTERM, signal.SIGINT, signal.SIGINT],
        [signal.SIGTERM, signal.SIGINT, 0.0],
    ],
    ids=["ctrl-c", "sigterm", "sighup", "ctrl-c six times", "sigterm then ctrl-c", "sigterm and ctrl-c at once"],
)
def test_a_stop_signal_keeps_finished_steps_writes_summary_and_memories_and_exits_128_plus_it(tmp_path, signals):
    # At once: both can reach the process before a handler runs, which CPython then calls in numeric order
    # (SIGINT first); the second is no "race condition" traceback. The exit code is the first to arrive's, but
    # signals that are pending in the kernel together arrive in numeric order too (a busy machine, where the
    # process did not run between the two sends), so either is right.
    sent, gap = (signals[:-1], signals[-1]) if isinstance(signals[-1], float) else (signals, 0.05)
    run_dir = tmp_path / "run"
    process = start(run_dir)
    trace = run_dir / "trace.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not trace.exists() or len(trace.read_text().splitlines()) < 6):
        time.sleep(0.1)
    for signum in sent:
        process.send_signal(signum)
        time.sleep(gap)
    stdout, stderr = process.communicate(timeout=60)
    firsts = set(sent) if gap == 0.0 else {signals[0]}
    assert process.returncode in {128 + signum for signum in firsts}, stderr
    assert "Traceback" not in stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    records = list(TraceLines(trace))  # every line is whole JSON
    assert len(records) >= 6
    for agent_id in ("Agent1", "Agent2"):
        steps = [r["step"] for r in records if r["agent_id"] == agent_id]
        assert summary["steps"][agent_id] == max(steps) < 500
        # Every step on record is in the saved memory, and no other.
        saved = json.loads((run_dir / "memory" / agent_id / "meta.json").read_text())
        assert saved["count"] == len(steps)
    assert not list(run_dir.rglob("*.partial"))
    assert "interrupted" in stdout
    assert "(interrupted)</span>" in (run_dir / "report.html").read_text()  # the report is written on a stop too


def test_ctrl_c_while_the_program_starts_is_one_line_and_exit_130(tmp_path):
    process = start(tmp_path / "run")
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in stderr + stdout
    assert len(stderr.strip().splitlines()) <= 1, stderr


def test_nothing_is_fetched_at_start_up(tmp_path):
    # No proxy can be reached and the hub is off: a download attempt would fail the run.
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    result = main("--agents", "1", "--steps", "1", "--run-dir", str(tmp_path / "run"), "-q", env=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("world", ["office", "office.yaml", "worlds/office.yaml"])
def test_a_shipped_world_is_found_by_name_from_any_directory(tmp_path, world, in_process):
    result = in_process.run("--world", world, "--steps", "1", "--run-dir", str(tmp_path / "run"), "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["world_file"].endswith("perception/worlds/office.yaml")


def test_markup_and_escape_codes_in_names_are_shown_as_text(tmp_path, in_process):
    world = tmp_path / "world.yaml"
    world.write_text(
        'name: "[/]room[bold]"\nsize: [4, 4]\nobjects:\n'
        '  - {name: "[/]", position: [1, 1]}\n  - {name: "\\e[31mred\\e[0m", position: [2, 2]}\n'
        '  - {name: "[link=x]cup", position: [3, 3]}\n'
    )
    run_dir = tmp_path / "run[1]"
    result = in_process.run("--world", str(world), "--agents", "2", "--steps", "12", "--run-dir", str(run_dir), "-v")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "\x1b" not in result.stdout + result.stderr
    assert "Run summary: [/]room[bold] (completed)" in result.stdout
    assert "[/]" in result.stdout.split("Objects found:")[1] and "[31mred[0m" in result.stdout
    assert "Run directory:" in result.stdout and "run[1]" in result.stdout
    assert json.loads((run_dir / "summary.json").read_text())["coverage"] == 1.0


@pytest.mark.parametrize(
    "model, variable", [("gpt-4o-mini", "OPENAI_API_KEY"), ("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY")]
)
def test_a_model_without_its_api_key_is_refused_before_the_run_starts(tmp_path, model, variable):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    result = main_here("--model", model, "--run-dir", str(tmp_path / "run"), env=env)
    assert_one_line_error(result, f"needs {variable} in the environment", "--api-base")
    assert not (tmp_path / "run").exists()


def test_main_called_from_python_leaves_the_signal_handlers_as_they_were(tmp_path):
    from explorer.cli.main import main as main_in_process

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    assert main_in_process(["--steps", "1", "--run-dir", str(tmp_path / "run"), "-q"]) == 0
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_the_program_collects_garbage_less_often_and_a_call_from_python_leaves_the_collector_as_it_was():
    from explorer.cli.main import COLLECT_AFTER
    from explorer.cli.main import main as main_in_process

    program = "import gc, sys\nfrom explorer.cli.main import main\nsys.argv = ['main.py', '--world', 'none.yaml']\n"
    program += "main()\nprint(gc.get_threshold()[0])"
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [str(COLLECT_AFTER)]
    before = gc.get_threshold()
    assert main_in_process(["--world", "none.yaml"]) == 2
    assert gc.get_threshold() == before != (COLLECT_AFTER, *before[1:])
