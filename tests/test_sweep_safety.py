"""A sweep loses nothing and leaks nothing: one sweep per `out`, no run removed while it goes or when it is no
attempt of the sweep's, one grid per `out` (which may gain seeds), the sweep file read once, a dry run that
writes nothing, and credentials shown nowhere. A sweep that is stopped or killed is a process of its own; the
others run in this one (tests/support/in_process.py), their runs in processes of their own."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from harness.sweeps import MAIN, processes_using, read_results, write_sweep
from perception.world import SHIPPED_WORLDS
from tests.support.in_process import sweep_here
from tests.support.optional import needs
from tests.support.paths import ROOT

ONE_RUN = "out: {out}\ngrid:\n  seed: [1]\nfixed:\n  world: office\n  agents: 1\n  steps: {steps}\n"
# Two conditions, each with the seeds given: office gives no start poses, so the seeds place the agent.
TWO_CONDITIONS = (
    "out: {out}\ngrid:\n  comm: [true, false]\n  seed: {seeds}\nfixed: {{world: office, agents: 1, steps: {steps}}}\n"
)
LONG = 50_000  # steps: a run that goes on for as long as a test needs it to (it is ended before it ends)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen]]:
    """Starts a sweep as from a terminal (its own process group); every sweep and run it left is ended after."""
    processes: list[subprocess.Popen] = []

    def start(sweep_file: Path, *args: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, MAIN, "--sweep", str(sweep_file), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a harness may have it ignored
        )
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    # The runs, each in a session of its own; before reading the sweeps' output to its end, since the process
    # multiprocessing keeps for a sweep's forked runs holds the sweep's stdout until they end.
    for pid in processes_using(tmp_path):
        os.kill(pid, signal.SIGKILL)
    for process in processes:
        process.communicate()


def wait_for(condition: Callable[[], bool], process: subprocess.Popen, what: str) -> None:
    """Until `condition` holds, while the sweep `process` goes on."""
    deadline = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, f"the sweep ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"waited in vain for {what}"
        time.sleep(0.05)


def wait_until_running(run_dir: Path, process: subprocess.Popen) -> None:
    """Until the run has written its first step."""
    trace = run_dir / "trace.jsonl"
    wait_for(lambda: trace.is_file() and trace.stat().st_size > 0, process, f"{run_dir} started")


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("main.py: error: "), result.stderr
    return lines[0]


# Issue 26, item 2: two sweeps into one `out`, or a sweep run again after it was killed.


def test_a_second_sweep_on_the_same_out_is_refused_while_the_first_runs(tmp_path, started):
    out = tmp_path / "out"
    first = started(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=LONG), "first.yaml"))
    run_dir = out / "seed=1"
    wait_until_running(run_dir, first)
    config = (run_dir / "config.json").read_text()

    second = sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=1), "second.yaml"))
    assert f"{out} is in use by another sweep" in one_line_error(second)
    assert (run_dir / "config.json").read_text() == config  # the first's run is untouched, and goes on
    assert first.poll() is None

    os.killpg(first.pid, signal.SIGINT)
    first.communicate(timeout=120)
    assert first.returncode == 130
    summary = json.loads((run_dir / "summary.json").read_text())
    trace = (run_dir / "trace.jsonl").read_text().splitlines()
    assert summary["status"] == "interrupted" and len(trace) == summary["steps"]["Agent1"] > 0


def test_a_run_left_going_by_a_killed_sweep_is_not_removed(tmp_path, started):
    out = tmp_path / "out"
    killed = started(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=LONG), "first.yaml"))
    run_dir = out / "seed=1"
    wait_until_running(run_dir, killed)
    killed.kill()  # SIGKILL: the sweep cannot stop its run, which goes on in its own session
    killed.wait()
    assert processes_using(run_dir)
    config = (run_dir / "config.json").read_text()

    again = sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=1), "again.yaml"))
    assert f"run seed=1 is still going in {run_dir}" in one_line_error(again)
    assert (run_dir / "config.json").read_text() == config
    assert processes_using(run_dir)  # still going, in its own directory


# Issue 26, item 3: only an earlier attempt of that very run is removed.


def make_folder_of_ones_own(path: Path) -> None:
    path.mkdir()
    (path / "notes.txt").write_text("mine")


def make_link_to_a_folder(path: Path) -> None:
    make_folder_of_ones_own(path.parent / "elsewhere")
    path.symlink_to(path.parent / "elsewhere")


@pytest.mark.parametrize(
    "make, words",
    [
        (make_folder_of_ones_own, "holds 'notes.txt', which no run writes"),
        (lambda path: path.write_text("a file"), "is not a directory"),
        (make_link_to_a_folder, "is not a directory"),
    ],
    ids=["a folder", "a file", "a link"],
)
def test_what_is_in_a_runs_place_and_no_run_is_refused_not_removed(tmp_path, make, words):
    out = tmp_path / "out"
    out.mkdir()
    make(out / "seed=1")
    sweep_file = write_sweep(tmp_path, ONE_RUN.format(out=out, steps=1))
    before = sorted(str(path) for path in tmp_path.rglob("*"))
    error = one_line_error(sweep_here(sweep_file))
    assert f"{out / 'seed=1'} {words}, so it is no earlier attempt of that run" in error
    assert sorted(str(path) for path in tmp_path.rglob("*") if ".sweep" not in path.parts) == before


def test_what_comes_into_a_pending_runs_place_is_refused_and_the_others_results_are_written(tmp_path, started):
    out = tmp_path / "out"
    process = started(write_sweep(tmp_path, TWO_CONDITIONS.format(out=out, seeds=[1], steps=LONG)), "--parallel", "1")
    first, pending = out / "comm=true,seed=1", out / "comm=false,seed=1"
    wait_until_running(first, process)  # every run was checked before it started
    make_folder_of_ones_own(pending)
    (pending / "summary.json").write_text('{"status": "completed"}')  # a summary, but not the run's own
    for pid in processes_using(first):
        os.kill(pid, signal.SIGINT)  # the first run ends; the sweep goes on to the next
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 2, stdout + stderr
    assert "Traceback" not in stdout + stderr
    assert f"{pending} holds 'notes.txt', which no run writes" in stdout
    assert "1 of 2 runs refused" in stdout and f"Results: {out / 'results.csv'}" in stdout
    results = [(row["run_dir"], row["status"], row["objects_found"]) for row in read_results(out)]
    assert results[1] == (pending.name, "refused", "") and results[0][:2] == (first.name, "interrupted")
    assert (pending / "notes.txt").read_text() == "mine"  # left as it was


def test_an_attempt_with_other_settings_is_refused_and_one_with_the_same_is_run_again(tmp_path):
    out = tmp_path / "out"
    run_dir = out / "seed=1"
    assert sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=2))).returncode == 0
    (run_dir / "summary.json").unlink()  # as if killed before its end
    (run_dir / "summary.json.0123456789ab.partial").write_text("{")  # its summary, half written
    trace = (run_dir / "trace.jsonl").read_text()

    other = sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=3), "other.yaml"))
    assert f"{run_dir} ran with steps 2, not 3, so it is no earlier attempt of that run" in one_line_error(other)
    assert (run_dir / "trace.jsonl").read_text() == trace

    same = sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=2), "same.yaml"))
    assert same.returncode == 0, same.stderr
    assert "0 complete already (skipped), 1 to run" in same.stdout
    assert sorted(path.name for path in run_dir.iterdir() if path.is_file()) == [
        "config.json",
        "report.html",
        "run.log",
        "summary.json",
        "trace.jsonl",
    ]


def test_a_claimed_directory_the_run_never_wrote_in_is_run_again(tmp_path):
    out = tmp_path / "out"
    (out / "seed=1").mkdir(parents=True)
    (out / "seed=1" / "config.json").touch()  # claimed: stopped before it wrote its settings
    result = sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=1)))
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "seed=1" / "summary.json").read_text())["status"] == "completed"


# Issue 26, item 5: credentials in a sweep's URLs are shown nowhere.

SECRETS = ("zq-user", "pw-Secret-91", "pw-Other-42", "key-Secret-73")


def test_credentials_stay_out_of_names_logs_results_page_and_console(tmp_path):
    out = tmp_path / "out"
    text = f"""\
out: {out}
grid:
  api_base:
    - http://zq-user:pw-Secret-91@127.0.0.1:9/v1
    - "http://zq-user:pw-Other-42@127.0.0.1:9/v1"
    - http://127.0.0.1:9/v1?api_key=key-Secret-73
fixed: {{world: office, agents: 1, steps: 1}}  # the built-in explorer: no model is called
"""
    result = sweep_here(write_sweep(tmp_path, text), "--parallel", "3")
    assert result.returncode == 0, result.stderr
    rows = read_results(out)
    assert [row["status"] for row in rows] == ["completed"] * 3
    assert len({row["run_dir"] for row in rows}) == len({row["api-base"] for row in rows}) == 3
    assert rows[0]["api-base"].startswith("http://***@127.0.0.1:9/v1 (")
    assert rows[2]["api-base"].startswith("http://127.0.0.1:9/v1?api_key=*** (")
    page = (out / "sweep.html").read_text()
    assert "http://***@127.0.0.1:9/v1" in page and "fixed: {world: office" in page  # the file, redacted
    for secret in SECRETS:
        assert secret not in result.stdout + result.stderr
        for path in out.rglob("*"):
            assert secret not in str(path.relative_to(out))
            assert not path.is_file() or secret.encode() not in path.read_bytes(), path


# Issue 26, item 13: the sweep file is read once.


@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_the_page_shows_the_sweep_file_as_read_at_the_start(tmp_path, started, change):
    out = tmp_path / "out"
    sweep_file = write_sweep(tmp_path, "# as first written\n" + ONE_RUN.format(out=out, steps=100))
    process = started(sweep_file)
    wait_for((out / "seed=1").exists, process, "the run started")  # the file has been read
    if change == "deleted":
        sweep_file.unlink()
    else:
        sweep_file.write_text("# written again\n" + ONE_RUN.format(out=out, steps=2))
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stdout + stderr
    page = (out / "sweep.html").read_text()
    assert "# as first written" in page and "written again" not in page


# Issue 26, item 15: one grid per `out`.


def test_another_grid_in_an_out_that_has_one_is_refused(tmp_path):
    out = tmp_path / "out"
    assert sweep_here(write_sweep(tmp_path, ONE_RUN.format(out=out, steps=1))).returncode == 0
    results, page = (out / "results.csv").read_text(), (out / "sweep.html").read_text()

    other = write_sweep(tmp_path, ONE_RUN.format(out=out, steps=1).replace("[1]", "[2, 3]"), "other.yaml")
    error = one_line_error(sweep_here(other))
    assert f"{other}: {out} holds the runs of another grid (seed=1): give the sweep another `out`" in error
    assert (out / "results.csv").read_text() == results and (out / "sweep.html").read_text() == page
    assert not (out / "seed=2").exists()


# Issue 49, part 2: more seeds for a finished sweep run only the new ones; any other change is still refused.


def files_and_times(directory: Path) -> dict[Path, int]:
    """Every file and folder under `directory`, with when it last changed: what a sweep that wrote nothing leaves."""
    return {path: path.stat().st_mtime_ns for path in directory.rglob("*")}


def finished_one_seed_sweep(directory: Path) -> Path:
    """The `out` of a finished sweep of two conditions, one seed each, in `directory`."""
    out = directory / "out"
    result = sweep_here(write_sweep(directory, TWO_CONDITIONS.format(out=out, seeds=[1], steps=2)), "--parallel", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture
def one_seed_sweep(tmp_path: Path) -> Path:
    """A finished sweep of two conditions, one seed each, of the test's own: it may change it."""
    return finished_one_seed_sweep(tmp_path)


@pytest.fixture(scope="module")
def shared_one_seed_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep of two conditions, one seed each, for the tests that must leave it as it is."""
    return finished_one_seed_sweep(tmp_path_factory.mktemp("one-seed"))


def test_another_seed_runs_one_more_run_per_condition_and_the_results_cover_all(tmp_path, one_seed_sweep):
    out = one_seed_sweep
    first = {
        name: (out / name / "summary.json").stat().st_mtime_ns for name in ("comm=true,seed=1", "comm=false,seed=1")
    }
    more = write_sweep(tmp_path, TWO_CONDITIONS.format(out=out, seeds=[1, 2], steps=2))
    before = files_and_times(out)
    dry = sweep_here(more, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "2 complete already (would be skipped), 2 to run. Nothing was run or written." in dry.stdout
    assert f"  {out / 'comm=true,seed=1'}: complete (skipped)\n  {out / 'comm=true,seed=2'}: to run\n" in dry.stdout
    assert files_and_times(out) == before  # no lock taken, no grid recorded, no run touched

    result = sweep_here(more, "--parallel", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 runs in" in result.stdout and "2 complete already (skipped), 2 to run, 2 at once." in result.stdout
    ran = sorted(line.split("] ")[1].split(":")[0] for line in result.stdout.splitlines() if line.startswith("["))
    assert ran == ["comm=false,seed=2", "comm=true,seed=2"]  # exactly one more run per condition
    assert {name: (out / name / "summary.json").stat().st_mtime_ns for name in first} == first  # not run again
    rows = read_results(out)
    names = ["comm=true,seed=1", "comm=true,seed=2", "comm=false,seed=1", "comm=false,seed=2"]
    assert [(row["run_dir"], row["status"]) for row in rows] == [(name, "completed") for name in names]
    with open(out / "conditions.csv", newline="", encoding="utf-8") as file:
        found = [row for row in csv.DictReader(file) if row["metric"] == "objects_found"]
    assert [(row["condition"], row["runs"], row["n"]) for row in found] == [
        ("comm=true", "2", "2"),
        ("comm=false", "2", "2"),
    ]
    page = (out / "sweep.html").read_text(encoding="utf-8")
    assert all(f'href="{quote(name)}/report.html"' in page for name in names)
    # The grid now holds the new seed: dropping it again is a change like any other.
    error = one_line_error(sweep_here(write_sweep(tmp_path, TWO_CONDITIONS.format(out=out, seeds=[1], steps=2))))
    assert f"{out} holds the runs of another grid (comm=true,seed=1, comm=true,seed=2, comm=false,seed=1, ...)" in error


@pytest.mark.parametrize(
    "change, words",
    [
        (("comm: [true, false]", "comm: [true, false, all]"), "holds the runs of another grid"),  # a condition added
        (("comm: [true, false]", "comm: [true]"), "holds the runs of another grid"),  # a condition removed
        (("comm: [true, false]", "comm: [false, true]"), "holds the runs of another grid"),  # the conditions reordered
        (("seed:", "random-starts: [true]\n  seed:"), "holds the runs of another grid"),  # a grid key added
        (("office", "garden"), "comm=true,seed=1 ran with world "),  # a fixed option changed: each run changed
    ],
)
def test_a_changed_condition_is_still_refused_with_more_seeds(tmp_path, shared_one_seed_sweep, change, words):
    out = shared_one_seed_sweep
    before = files_and_times(out)
    more = TWO_CONDITIONS.format(out=out, seeds=[1, 2], steps=2)
    changed = write_sweep(tmp_path, more.replace(*change), "other.yaml")
    for dry_run in ((), ("--dry-run",)):
        error = one_line_error(sweep_here(changed, *dry_run))
        assert error.startswith(f"main.py: error: {changed}: ") and words in error
        assert error.endswith("give the sweep another `out`") or "give the sweep another `out`, or remove" in error
    assert files_and_times(out) == before


def another_checkout(directory: Path) -> Path:
    """A copy of this checkout's program in `directory`: the same version, its shipped worlds at another path."""
    for package in ("explorer", "perception", "nodes", "memory", "prompts"):
        shutil.copytree(ROOT / package, directory / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "main.py", directory)
    return directory / "main.py"


def test_a_sweep_over_a_shipped_world_resumes_from_another_checkout(tmp_path):
    out = tmp_path / "out"
    sweep_file = write_sweep(tmp_path, ONE_RUN.format(out=out, steps=2))
    assert sweep_here(sweep_file).returncode == 0
    run_dir = out / "seed=1"
    assert json.loads((run_dir / "config.json").read_text())["world"] == "office"  # by its name, not its path
    before = files_and_times(run_dir)
    elsewhere = another_checkout(tmp_path / "elsewhere")
    resumed = subprocess.run(
        [sys.executable, str(elsewhere), "--sweep", str(sweep_file)], capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "1 complete already (skipped), 0 to run." in resumed.stdout
    assert files_and_times(run_dir) == before
    assert [row["status"] for row in read_results(out)] == ["completed"]
    # A run an earlier version recorded by this checkout's path to the shipped world is that world too.
    config = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps({**config, "world": str(SHIPPED_WORLDS / "office.yaml")}))
    assert "1 complete already (skipped), 0 to run." in sweep_here(sweep_file).stdout


@pytest.mark.parametrize(
    ("damage", "field"),
    [
        (lambda summary: {**summary, "team": [1, 2]}, "team"),
        (lambda summary: {**summary, "discovery_curve": [[1, "two"]]}, "discovery_curve"),
        (lambda summary: {**summary, "team": {**summary["team"], "cells_curve": "cells"}}, "team.cells_curve"),
    ],
)
def test_a_finished_run_s_misshapen_summary_is_one_line_and_the_others_results_are_written(tmp_path, damage, field):
    out = tmp_path / "out"
    sweep_file = write_sweep(tmp_path, TWO_CONDITIONS.format(out=out, seeds="[1]", steps=2))
    assert sweep_here(sweep_file).returncode == 0
    bad = next(path for path in sorted(out.iterdir()) if path.name.startswith("comm="))
    summary = json.loads((bad / "summary.json").read_text())
    (bad / "summary.json").write_text(json.dumps(damage(summary)))  # valid JSON, of the wrong shape

    resumed = sweep_here(sweep_file)
    assert resumed.returncode == 1, resumed.stderr  # as for any run that did not complete
    assert "Traceback" not in resumed.stdout + resumed.stderr
    warned = [line for line in resumed.stdout.splitlines() if "is not what a run writes" in line]
    assert len(warned) == 1 and bad.name in warned[0] and f"`{field}`" in warned[0]
    statuses = {row["run_dir"]: row["status"] for row in read_results(out)}
    assert statuses.pop(bad.name) == "misshapen" and set(statuses.values()) == {"completed"}
    assert (out / "conditions.csv").exists() and (out / "sweep.html").exists()
    needs("pandas", "data")
    from explorer.api import load_sweep

    assert len(load_sweep(out).runs) == 2  # the misshapen run's steps left out, not a crash
