"""Sweeps as a user runs them: `main.py --sweep FILE.yaml`, real runs in real processes, and the page they make. The
sweep itself runs in this process (tests/support/in_process.py) but where Ctrl-C reaches it as a process of its own."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.sweep.stats import Bounds, curve_intervals, mean_interval, paired_interval
from harness.sweeps import MAIN, read_results, stop_sweep, write_sweep
from tests.support.in_process import sweep_here

pytest_plugins = ("tests.support.browser",)
SWEEP = """\
out: {out}
grid:
  world: [apartment, office]
  comm: [true, false]
  seed: [1, 2]
fixed:
  agents: 2
  steps: 5
  random-starts: true
"""
RUN_NAMES = [
    f"world={world},comm={comm},seed={seed}"
    for world in ("apartment", "office")
    for comm in ("true", "false")
    for seed in (1, 2)
]


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory):
    """2 worlds x comm on/off x 2 seeds, 5 steps each, two at once: the sweep directory and the first result."""
    directory = tmp_path_factory.mktemp("sweep")
    out = directory / "out"
    sweep_file = write_sweep(directory, SWEEP.format(out=out))
    return out, sweep_here(sweep_file, "--parallel", "2"), sweep_file


def test_a_sweep_runs_every_condition_and_writes_a_row_per_run(finished_sweep):
    out, result, _sweep_file = finished_sweep
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "0 complete already (skipped), 8 to run, 2 at once" in result.stdout
    rows = read_results(out)
    assert [row["run_dir"] for row in rows] == RUN_NAMES  # grid order: the first key varies slowest
    assert list(rows[0])[:8] == ["world", "comm", "seed", "agents", "steps", "random-starts", "run_dir", "status"]
    for row in rows:
        summary = json.loads((out / row["run_dir"] / "summary.json").read_text())
        config = json.loads((out / row["run_dir"] / "config.json").read_text())
        # Each run is a normal run with the options of its row.
        assert Path(config["world"]).stem == row["world"] and (config["comm"] != "none") == (row["comm"] == "true")
        assert (config["seed"], config["agents"], summary["steps"]) == (int(row["seed"]), 2, {"Agent1": 5, "Agent2": 5})
        assert row["status"] == summary["status"] == "completed"
        assert int(row["objects_found"]) == len(summary["objects_discovered"])
        assert int(row["total_objects"]) == summary["total_objects"]
        assert float(row["cell_coverage"]) == pytest.approx(
            summary["team"]["cells_seen"] / summary["team"]["total_cells"], abs=1e-4
        )
        assert float(row["overlap_ratio"]) == summary["team"]["overlap_ratio"]
        assert row["steps_to_50_objects"] == str(summary["team"]["steps_to_objects"]["50%"] or "")
        assert int(row["model_calls"]) == 0 and row["cost_usd"] == ""  # the built-in explorer calls no model
        assert float(row["wall_seconds"]) > 0
    # Without messages nobody says anything.
    assert {row["messages_per_agent_step"] for row in rows if row["comm"] == "false"} == {"0.0"}
    assert all(float(row["messages_per_agent_step"]) > 0 for row in rows if row["comm"] == "true")


def test_the_same_command_again_skips_every_completed_run(finished_sweep):
    out, _, sweep_file = finished_sweep
    before = {name: (out / name / "summary.json").stat().st_mtime_ns for name in RUN_NAMES}
    result = sweep_here(sweep_file)
    assert result.returncode == 0, result.stderr
    assert "8 complete already (skipped), 0 to run." in result.stdout
    assert {name: (out / name / "summary.json").stat().st_mtime_ns for name in RUN_NAMES} == before
    assert [row["status"] for row in read_results(out)] == ["completed"] * 8


def test_a_sweep_file_that_now_sets_other_options_is_refused_over_its_completed_runs(finished_sweep, tmp_path):
    out, _, _ = finished_sweep
    changed = write_sweep(tmp_path, SWEEP.format(out=out).replace("steps: 5", "steps: 6"))
    result = sweep_here(changed)
    assert result.returncode == 2
    assert result.stderr == (
        f"main.py: error: {changed}: {out / RUN_NAMES[0]} ran with steps 5, not 6: give the sweep another `out`, "
        "or remove that run to run it again\n"
    )


def test_the_page_shows_each_metric_with_intervals_offline(finished_sweep, browser, tmp_path):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    out, _, _ = finished_sweep
    page = PageVisit(browser, out / "sweep.html")
    assert page.console_errors == [] and page.requests == []
    charts = browser.find_elements(By.CSS_SELECTOR, ".js-plotly-plot")
    assert len(charts) >= 10 and all(chart.find_elements(By.CSS_SELECTOR, "svg") for chart in charts)
    # Charts per world: each world's discovery curves, per condition a band (two seeds each) and its mean.
    conditions = [
        "world=apartment, comm=true",
        "world=apartment, comm=false",
        "world=office, comm=true",
        "world=office, comm=false",
    ]
    for number, world in ((1, "apartment"), (2, "office")):
        traces = browser.execute_script(f"return document.getElementById('discovery-{number}').data.map(t => t.name)")
        assert [name for name in traces if "CI" not in name] == [c for c in conditions if f"={world}," in c]
        assert len(traces) == 4
    assert [h.text for h in browser.find_elements(By.TAG_NAME, "h2")][1:3] == ["World apartment", "World office"]
    # Objects found per condition: the mean over two seeds and its interval, as the rows give them.
    rows = read_results(out)
    found = [int(row["objects_found"]) for row in rows if row["world"] == "office" and row["comm"] == "true"]
    expected = mean_interval(found)
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#conditions tr:first-child th")]
    assert headers[1:] == [f"{condition}\n2 of 2 finished" for condition in conditions]
    cells = [td.text for td in browser.find_elements(By.XPATH, "//tr[th='objects found']/td")]
    assert len(cells) == 4 and all(" [" in cell and cell.endswith("]") for cell in cells)  # two seeds: intervals
    chart = browser.execute_script("return document.getElementById('metric-objects_found-2').data")
    office = next(trace for trace in chart if trace["y"] == ["world=office, comm=true"])
    assert office["x"] == [pytest.approx(expected.mean)]
    assert office["error_x"]["array"] == [pytest.approx(expected.high - expected.mean)]
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "td a")]
    assert len(links) == 8 and all(link.endswith(("/report.html", "/summary.json")) for link in links)
    size = browser.get_window_size()
    browser.set_window_size(1280, browser.execute_script("return document.body.scrollHeight") + 150)
    browser.save_screenshot(str(tmp_path / "sweep.png"))  # the whole page, to look at
    browser.set_window_size(size["width"], size["height"])


def test_ctrl_c_stops_every_run_and_the_same_command_resumes(tmp_path):
    out = tmp_path / "out"
    sweep_file = write_sweep(tmp_path, f"out: {out}\ngrid:\n  seed: [1, 2, 3]\nfixed:\n  world: office\n  steps: 400\n")
    # As from a terminal: the sweep leads its own process group, and Ctrl-C goes to the whole group.
    process = subprocess.Popen(
        [sys.executable, MAIN, "--sweep", str(sweep_file), "--parallel", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a harness may have it ignored
    )
    running = None
    deadline = time.monotonic() + 180
    while running is None and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
        completed = [d for d in out.glob("seed=*") if (d / "summary.json").is_file()]
        # Stop once a run has completed and another is part-way through its 800 agent-steps.
        started = [d for d in out.glob("seed=*") if (d / "trace.jsonl").is_file() and not (d / "summary.json").exists()]
        if completed and any(4 <= len((d / "trace.jsonl").read_text().splitlines()) < 400 for d in started):
            running = started
    assert running, "no run was part-way when the test meant to stop the sweep"
    statuses = {row["run_dir"]: row["status"] for row in stop_sweep(process, out)}
    assert set(statuses) == {"seed=1", "seed=2", "seed=3"}
    for run_dir in running:  # stopped cleanly: its summary written, its finished steps kept
        assert statuses[run_dir.name] == json.loads((run_dir / "summary.json").read_text())["status"] == "interrupted"
    complete = sorted(name for name, status in statuses.items() if status == "completed")
    assert complete and len(complete) < 3
    assert (out / "sweep.html").is_file()

    result = sweep_here(sweep_file, "--parallel", "2")
    assert result.returncode == 0, result.stderr
    assert f"{len(complete)} complete already (skipped), {3 - len(complete)} to run" in result.stdout
    assert [row["status"] for row in read_results(out)] == ["completed"] * 3
    assert not any(f"] {name}:" in result.stdout for name in complete)  # the skipped ones did not run again


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    out = tmp_path / "out"
    # Nothing listens on port 9: the second run's model check refuses it before it starts (exit code 2).
    sweep_file = write_sweep(
        tmp_path,
        f"""\
out: {out}
grid:
  model: [offline, openai/unreachable]
fixed: {{agents: 1, steps: 1, api_base: "http://127.0.0.1:9/v1", timeout: 1}}
""",
    )
    result = sweep_here(sweep_file, "--parallel", "2")
    assert result.returncode == 1, result.stderr
    assert [(row["model"], row["status"]) for row in read_results(out)] == [
        ("offline", "completed"),
        ("openai/unreachable", "failed"),
    ]
    assert "the model check before the run failed" in result.stdout
    assert "1 of 2 runs did not complete" in result.stdout


@pytest.mark.parametrize(
    "text, words",
    [
        ("grid:\n  wrld: [office]\n", ["unknown run option `wrld`"]),
        ("grid:\n  world: [office, atlantis]\n", ["run world=atlantis", "world file not found: atlantis"]),
        ("grid:\n  seed: [1, 2]\nfixed:\n  profiles: no/such/profiles.yaml\n", ["profiles file not found"]),
        ("grid:\n  seed: [1, two]\n", ["run seed=two", "argument --seed: invalid int value: 'two'"]),
        ("grid:\n  agents: [1, 0]\n", ["--agents must be from 1 to 1000, not 0"]),
        ("grid:\n  comm: [true, sometimes]\n", ["run comm=sometimes", "argument --comm: invalid choice: 'sometimes'"]),
        ("grid:\n  comm: [true, 2]\n", ["run comm=2", "--comm", "invalid choice"]),
        ("grid:\n  seed: [1, 1]\n", ["`seed` lists 1 twice"]),
        ("grid:\n  seed: 3\n", ["`seed` must be a non-empty list"]),
        ("grid:\n  seed: [1]\nfixed:\n  run_dir: x\n", ["`run_dir` cannot be set per run"]),
        (
            "grid:\n  comm: [true, false]\nfixed:\n  no-comm: true\n",
            ["`no-comm` sets what the grid's `comm` already sets"],
        ),
        ("grd:\n  seed: [1]\n", ["unknown key 'grd'"]),
        ("fixed:\n  seed: 1\n", ["`grid` is missing"]),
        ("grid: [1, 2\n", ["invalid YAML"]),
        ("conditions: [{comm: false}]\n", ["conditions: entry 1 must be a mapping with a `name`"]),
        ("conditions:\n  - {name: a}\n  - {name: a, comm: false}\n", ["conditions: two are named 'a'"]),
        ("conditions: [{name: a, seed: 1}]\ngrid:\n  seed: [1, 2]\n", ["`seed` sets what the grid's `seed` already"]),
        ("conditions: [{name: a, wrld: x}]\n", ["conditions: a: unknown run option `wrld`"]),
        ("conditions: [{name: a}]\nbaseline: b\n", ["baseline: no condition is named 'b' (they are a)"]),
        ("grid:\n  comm: [true, false]\nbaseline: {comm: maybe}\n", ["baseline: the grid's `comm` has no value maybe"]),
        ("grid:\n  seed: [1, 2]\nbaseline: {seed: 1}\n", ["baseline: `seed` is not one of the grid's options"]),
        ("grid:\n  seed: [1]\nbaseline: offline\n", ["`baseline` must name grid values"]),
        ("grid:\n  seed: [1]\nfixed:\n  random-starts: sometimes\n", ["`random-starts` must be true or false"]),
        ("grid:\n  stop-when: [never]\n", ["--stop-when", "'never'"]),
        ("grid:\n  seed: [1, 2]\nfixed:\n  world: apartment\n", ["the seeds would repeat one run exactly"]),
        ("grid:\n  seed: [1, 2]\nfixed:\n  dry-run: true\n", ["`dry-run` cannot be set per run"]),
        ("grid:\n  api-base: ['http://u:pw@[::1/v1']\n", ["--api-base must be an http or https URL", "***@[::1"]),
    ],
)
def test_a_bad_sweep_file_is_one_line_and_exit_2_before_anything_runs(tmp_path, text, words):
    result = sweep_here(write_sweep(tmp_path, text), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("main.py: error: "), result.stderr
    assert "sweep.yaml" in lines[0] and "Traceback" not in result.stdout + result.stderr
    for word in words:
        assert word in lines[0]
    assert list(tmp_path.iterdir()) == [tmp_path / "sweep.yaml"]  # no sweep directory, no run


# Issue 49, part 2: a world that fixes its start poses ran one run three times over, once per seed.
def test_seeds_on_a_world_with_fixed_starts_are_refused_with_what_to_do(tmp_path):
    sweep_file = write_sweep(tmp_path, "grid:\n  comm: [true, false]\n  seed: [1, 2, 3]\nfixed:\n  world: apartment\n")
    result = sweep_here(sweep_file, "--parallel", "2", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"main.py: error: {sweep_file}: the seeds would repeat one run exactly in 2 of 2 conditions, since the world "
        "gives every agent its start pose and no decision uses the seed: add `random-starts: true`, run a generated "
        "world (its seed places the team), or drop the seeds (comm=true; comm=false)\n"
    )
    assert list(tmp_path.iterdir()) == [sweep_file]  # no sweep directory, no run
    for seeds_place_the_team in ("  random-starts: true\n", "  world: gen:house\n"):
        placed = sweep_file.read_text().replace("  world: apartment\n", seeds_place_the_team)
        assert sweep_here(write_sweep(tmp_path, placed), "--dry-run", cwd=tmp_path).returncode == 0


def test_a_dry_run_lists_each_condition_s_runs_and_writes_nothing(tmp_path):
    sweep_file = write_sweep(tmp_path, "grid:\n  comm: [true, false]\n  seed: [1, 2]\nfixed:\n  world: office\n")
    result = sweep_here(sweep_file, "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = Path("runs") / "sweep-sweep"  # the default `out`, from the current directory
    *listed, plan, detectable = result.stdout.splitlines()
    assert listed == [
        f"Dry run of a sweep of 4 runs in {out}: 0 complete already (would be skipped), 4 to run. "
        "Nothing was run or written.",
        "comm=true: 2 runs",
        f"  {out / 'comm=true,seed=1'}: to run",
        f"  {out / 'comm=true,seed=2'}: to run",
        "comm=false: 2 runs",
        f"  {out / 'comm=false,seed=1'}: to run",
        f"  {out / 'comm=false,seed=2'}: to run",
    ]
    assert plan.startswith("Analysis plan: 2 conditions × 2 runs (2 seeds); baseline: none (no paired differences);")
    assert detectable.startswith("Smallest difference 2 runs can detect at 80% power (two-sided 5%): not estimated")
    assert result.stderr == "" and list(tmp_path.iterdir()) == [sweep_file]  # no `out`, no lock, no run
    bad = sweep_here(write_sweep(tmp_path, "grid:\n  world: [office, atlantis]\n"), "--dry-run", cwd=tmp_path)
    assert bad.returncode == 2 and "world file not found: atlantis" in bad.stderr  # checked as a sweep checks


def test_dry_run_goes_with_sweep_only(capsys):
    from explorer.cli.main import main

    assert main(["--dry-run", "--agents", "1"]) == 2
    assert capsys.readouterr().err == (
        "main.py: error: --dry-run goes with --sweep FILE: it lists a sweep's runs without running them\n"
    )


def test_parallel_must_be_one_or_more(tmp_path):
    result = sweep_here(write_sweep(tmp_path, "grid:\n  seed: [1]\n"), "--parallel", "0", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "main.py: error: --parallel must be at least 1, not 0\n")
    assert not (tmp_path / "runs").exists()


def test_a_bad_world_file_is_named_before_anything_runs(tmp_path):
    (tmp_path / "broken.yaml").write_text("name: broken\nsize: [3]\n")
    result = sweep_here(write_sweep(tmp_path, "grid:\n  world: [office, broken.yaml]\n"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("main.py: error: broken.yaml: ") and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_the_interval_of_a_known_sample_is_a_deterministic_bootstrap():
    interval = mean_interval([2, 4, 4, 5, 7])
    assert interval.n == 5 and interval.mean == pytest.approx(4.4)
    assert 2 <= interval.low < 4.4 < interval.high <= 7  # a percentile bootstrap stays within the values seen
    assert mean_interval([2, 4, 4, 5, 7]) == interval  # resampled from a fixed seed: the same runs, the same figures
    assert mean_interval([3, None, 5]).n == 2  # a run that never reached a figure is left out
    assert mean_interval([7]) == mean_interval([7, None])
    assert (mean_interval([7]).mean, mean_interval([7]).low) == (7, None)  # one run: no interval
    assert mean_interval([None]).mean is None


# Issue 29, item 3: intervals that respect bounds (Student's t gave a share of 1.11, and -1.57 objects found).
def test_intervals_stay_within_what_the_figure_can_be():
    share = mean_interval([0.9, 1.0, 1.0], Bounds(0.0, 1.0))
    assert share.high <= 1.0 and share.low >= 0.9
    found = mean_interval([0, 0, 4], Bounds(0, 12))
    assert found.low >= 0 and found.high <= 4
    assert Bounds(1, 40).clip(0.2) == 1 and Bounds(1, 40).clip(41) == 40
    # A difference of two shares lies between -1 and 1, whatever the runs.
    difference = paired_interval([(1.0, 0.0), (0.5, 0.5), (0.0, 0.0)], Bounds(0.0, 1.0))
    assert -1 <= difference.low <= difference.mean <= difference.high <= 1 and difference.n == 3
    assert paired_interval([(3, None), (None, 2)]).n == 0  # a pair counts only where both runs have the figure


def test_curves_are_averaged_per_step_and_a_short_run_keeps_its_last_value():
    steps, intervals = curve_intervals([[[1, 1], [2, 3]], [[1, 1], [2, 2], [3, 5]], []])
    assert steps == [1, 2, 3]
    assert [i.mean for i in intervals] == [1, 2.5, 4]
    assert [i.n for i in intervals] == [2, 2, 2]
    assert intervals[0].low == intervals[0].high == 1


def test_one_run_is_one_run_not_one_runs(tmp_path):
    sweep_file = write_sweep(tmp_path, "grid:\n  seed: [1]\nfixed:\n  world: office\n  steps: 3\n")
    result = sweep_here(sweep_file, "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Dry run of a sweep of 1 run in ") and "all runs: 1 run\n" in result.stdout
    assert " 1 runs" not in result.stdout
    from explorer.sweep.compare import runs_text

    assert [runs_text(count) for count in (0, 1, 2, 1500)] == ["0 runs", "1 run", "2 runs", "1,500 runs"]
