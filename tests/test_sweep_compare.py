"""Comparisons done right in sweeps (issue 29, items 3 and 6; issue 28, item 2's sweep table): named conditions,
paired differences from a baseline, n wherever a figure counts fewer runs, start poses that vary with the seed,
runs that end once everything is found, and run pages that share one copy of plotly."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError
from explorer.report.page import SHARED_PLOTLY, write_page
from explorer.sweep.compare import STEPS, Metric, RunRow, compare, figure_text
from explorer.sweep.stats import Interval
from explorer.sweep.sweep_file import SweepError, load_sweep
from harness.sweeps import read_results, write_sweep
from perception.families.generate import open_world
from perception.mock import MockPerception
from perception.world import SHIPPED_WORLDS
from tests.support.in_process import sweep_here

pytest_plugins = ("tests.support.browser",)
CONDITIONS = """\
out: {out}
conditions:
  - {{name: offline}}
  - {{name: no-comm, comm: false}}
  - {{name: random, model: random, comm: false}}
grid:
  seed: [1, 2]
fixed:
  world: apartment
  agents: 2
  steps: 40
  random-starts: true
  stop-when: all-found
baseline: offline
"""
NAMES = [f"condition={name},seed={seed}" for name in ("offline", "no-comm", "random") for seed in (1, 2)]
MAX_PAGE_BYTES = 1_000_000  # a run's page without plotly's 4.8 MB


@pytest.fixture(scope="module")
def named_sweep(tmp_path_factory):
    """Three named conditions (not the product of model and comm), two seeds each, paired against offline."""
    directory = tmp_path_factory.mktemp("named")
    out = directory / "out"
    result = sweep_here(write_sweep(directory, CONDITIONS.format(out=out)), "--parallel", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return out, result


def conditions_csv(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(out / "conditions.csv", newline="", encoding="utf-8") as file:
        return {(row["condition"], row["metric"]): row for row in csv.DictReader(file)}


def summary(out: Path, name: str) -> dict:
    return json.loads((out / name / "summary.json").read_text())


def test_named_conditions_run_instead_of_the_grids_product(named_sweep):
    out, result = named_sweep
    rows = read_results(out)
    assert [row["run_dir"] for row in rows] == NAMES  # no fourth condition: random with messages
    assert [(row["condition"], row["model"], row["comm"]) for row in rows[::2]] == [
        ("offline", "", ""),
        ("no-comm", "", "false"),
        ("random", "random", "false"),
    ]
    for row in rows:
        config = json.loads((out / row["run_dir"] / "config.json").read_text())
        assert config["model"] == (row["model"] or "offline") and (config["comm"] != "none") == (
            row["condition"] == "offline"
        )
    assert "Traceback" not in result.stdout + result.stderr


def test_paired_differences_from_the_baseline_on_shared_seeds(named_sweep, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    out, result = named_sweep
    rows, figures = read_results(out), conditions_csv(out)
    found = {row["run_dir"]: int(row["objects_found"]) for row in rows}
    differences = [found[f"condition=random,seed={s}"] - found[f"condition=offline,seed={s}"] for s in (1, 2)]
    random = figures[("random", "objects_found")]
    assert (random["baseline"], random["pairs"], random["difference_n"]) == ("offline", "2", "2")
    assert float(random["difference"]) == pytest.approx(sum(differences) / 2)
    assert float(random["difference_low"]) <= float(random["difference"]) <= float(random["difference_high"])
    assert figures[("offline", "objects_found")]["baseline"] == ""  # the baseline is not paired with itself
    assert "Paired differences from the baseline" in result.stdout and "random minus offline" in result.stdout
    page = PageVisit(browser, out / "sweep.html")
    assert page.console_errors == [] and page.requests == []
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#paired tr:first-child th")]
    assert headers[1:] == ["no-comm\nminus offline, 2 seeds in both", "random\nminus offline, 2 seeds in both"]
    cell = browser.find_elements(By.XPATH, "//table[@id='paired']//tr[th='objects found']/td")[1].text
    assert cell == figure_text(
        Interval(2, sum(differences) / 2, float(random["difference_low"]), float(random["difference_high"])),
        2,
        signed=True,
    )


def test_pairing_takes_out_what_the_seed_does_to_both():
    metric = Metric("steps_to_90_objects", "steps to 90%", STEPS)

    def row(condition: str, seed: int, steps: int | None) -> RunRow:
        factors = {"condition": condition}
        metrics = {"steps_to_90_objects": steps, "steps_run": 40}
        return RunRow(f"{condition},{seed}", condition, "office", factors, (seed,), "completed", metrics, [])

    # Seeds that make both conditions slow or quick: each condition's own interval is wide, the pairs' narrow.
    rows = [row("a", seed, steps) for seed, steps in ((1, 10), (2, 30), (3, 20))]
    rows += [row("b", seed, steps) for seed, steps in ((1, 12), (2, 32), (3, None))]
    a, b = compare(rows, (metric,), {"condition": "a"})
    assert a.differences is None and b.baseline == "a" and b.pairs == 3
    paired = b.differences["steps_to_90_objects"]
    assert (paired.n, paired.mean, paired.low, paired.high) == (2, 2, 2, 2)
    own = b.figures["steps_to_90_objects"]
    assert own.n == 2 and own.high - own.low > 10
    # n wherever a figure counts only some runs.
    assert figure_text(own, 3) == f"22 [{own.low:.3g}, {own.high:.3g}] (n=2/3)"
    assert figure_text(Interval(2, 33, None, None), 3) == "33 (n=2/3)"
    assert figure_text(Interval(0, None, None, None), 3) == "- (n=0/3)"
    assert figure_text(paired, 3, signed=True) == "+2 [+2, +2] (n=2/3)"


def test_n_is_shown_in_the_console_the_csv_and_the_page_where_a_figure_counts_fewer_runs(named_sweep, browser):
    from tests.support.browser import PageVisit

    out, result = named_sweep
    figures = conditions_csv(out)
    PageVisit(browser, out / "sweep.html")
    partial = [(c, m) for (c, m), row in figures.items() if int(row["n"]) < int(row["finished"])]
    for condition, metric in partial:
        row = figures[(condition, metric)]
        assert row["n"] != "" and row["finished"] == "2"
    labels = {"seconds_to_90_objects": "simulated seconds to 90% of the objects", "objects_found": "objects found"}
    for condition, metric in [(c, m) for c, m in partial if m in labels]:
        assert cell_text(browser, labels[metric], condition).endswith(f"(n={figures[(condition, metric)]['n']}/2)")
        assert f"(n={figures[(condition, metric)]['n']}/2)" in result.stdout
    # The random walkers (seeded: the same each time) find no 90% of the objects in 40 steps: the simulated
    # seconds to it count none of 2 runs.
    assert ("random", "seconds_to_90_objects") in partial and figures[("random", "seconds_to_90_objects")]["n"] == "0"
    assert "- (n=0/2)" in result.stdout
    # The steps to it count both, censored at their last step: the median is not reached by step 40.
    steps = figures[("random", "steps_to_90_objects")]
    assert (steps["statistic"], steps["n"], steps["censored"], steps["mean"]) == ("km_median", "2", "2", "")
    assert cell_text(browser, "steps to 90% of the objects", "random") == "> 40 (2 censored)"
    assert "> 40 (2 censored)" in result.stdout


def cell_text(browser, label: str, condition: str) -> str:
    """The conditions table's cell of the metric `label` and the named sweep's `condition`."""
    from selenium.webdriver.common.by import By

    index = ["offline", "no-comm", "random"].index(condition)
    return browser.find_elements(By.XPATH, f"//table[@id='conditions']//tr[th='{label}']/td")[index].text


def test_the_sweep_table_gains_steps_and_seconds_to_90_percent(named_sweep, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    out, result = named_sweep
    for row in read_results(out):
        team = summary(out, row["run_dir"])["team"]
        assert row["steps_to_90_objects"] == str(team["steps_to_objects"]["90%"] or "")
        assert row["seconds_to_90_objects"] == str(team["seconds_to_objects"]["90%"] or "")
    for header in ("steps to 90%", "sim. s to 90%", "share of cells seen"):  # not "cells seen": it is a share
        assert header in result.stdout
    PageVisit(browser, out / "sweep.html")
    rows = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#conditions th")]
    assert "steps to 90% of the objects" in rows and "simulated seconds to 90% of the objects" in rows


def test_stop_when_all_found_ends_the_team_s_run_once_every_object_is_found(named_sweep):
    out, _ = named_sweep
    for seed in (1, 2):
        ended = summary(out, f"condition=offline,seed={seed}")
        assert (ended["status"], ended["ended_by"], ended["stop_when"]) == ("completed", "all-found", "all-found")
        assert len(ended["objects_discovered"]) == ended["total_objects"]
        assert set(ended["steps"].values()) == {ended["first_full_discovery_step"]} and ended["steps"]["Agent1"] < 40
    walked = summary(out, "condition=random,seed=1")
    assert walked["ended_by"] == ("all-found" if walked["coverage"] == 1 else "steps")


def test_random_starts_vary_the_start_poses_with_the_seed(named_sweep, tmp_path):
    out, _ = named_sweep
    starts = []
    for seed in (1, 2):
        with open(out / f"condition=offline,seed={seed}" / "trace.jsonl", encoding="utf-8") as trace:
            first = [json.loads(next(trace)) for _ in range(2)]
        starts.append([line["pose"] for line in first])
    assert starts[0] != starts[1]
    world = open_world(SHIPPED_WORLDS / "apartment.yaml", None)
    given = MockPerception(world, None, ["Agent1", "Agent2"], 1)
    assert given.get_agent_state("Agent1") == world.agent_starts[0]
    placed = [MockPerception(world, None, ["Agent1"], seed, random_starts=True) for seed in (1, 2, 3)]
    assert len({perception.get_agent_state("Agent1") for perception in placed}) > 1


# Issue 49, part 2: seeds that change nothing are refused (36 identical runs cost a study 3 minutes).
def test_a_sweep_whose_seeds_would_repeat_one_run_is_refused(tmp_path):
    fixed = "grid:\n  seed: [1, 2]\n  comm: [true, false]\nfixed:\n  world: apartment\n"
    with pytest.raises(SweepError) as refused:
        load_sweep(write_sweep(tmp_path, fixed))
    assert str(refused.value).startswith(f"{tmp_path / 'sweep.yaml'}: the seeds would repeat one run exactly ")
    assert "in 2 of 2 conditions" in str(refused.value) and str(refused.value).endswith("(comm=true; comm=false)")
    assert "add `random-starts: true`, run a generated world (its seed places the team), or drop the seeds" in str(
        refused.value
    )
    # The seeds matter, so the sweep is as before: they place the agents, drive a decision, or meet the clock.
    for seeds_matter in (
        "  random-starts: true\n",
        "  model: random\n",  # the seed drives it
        "  schedule: realtime\n",  # the wall clock orders the steps
        "  agents: 3\n",  # apartment gives two start poses: the seed places the third agent
    ):
        assert load_sweep(write_sweep(tmp_path, fixed + seeds_matter)).runs
    assert load_sweep(write_sweep(tmp_path, fixed.replace("apartment", "office"))).runs  # it gives no start poses
    assert load_sweep(write_sweep(tmp_path, fixed.replace("[1, 2]", "[1]"))).runs  # one seed repeats nothing


def test_run_pages_in_a_sweep_load_one_shared_plotly_and_still_draw(named_sweep, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    out, _ = named_sweep
    assert (out / SHARED_PLOTLY).stat().st_size > 4_000_000
    assert sorted(path.name for path in out.rglob("*.js")) == [SHARED_PLOTLY]
    report = out / NAMES[0] / "report.html"
    text = report.read_text(encoding="utf-8")
    assert f'<script src="../{SHARED_PLOTLY}"></script>' in text and len(text.encode()) < MAX_PAGE_BYTES
    page = PageVisit(browser, report)
    assert page.console_errors == [] and page.requests == []
    charts = browser.find_elements(By.CSS_SELECTOR, ".js-plotly-plot")
    assert charts and all(chart.find_elements(By.CSS_SELECTOR, "svg") for chart in charts)
    assert (out / "sweep.html").stat().st_size < MAX_PAGE_BYTES


def test_a_single_run_s_page_stays_self_contained(tmp_path):
    alone = tmp_path / "run" / "page.html"
    alone.parent.mkdir()
    write_page(alone, "base.html.j2", title="t")
    assert len(alone.read_bytes()) > 4_000_000 and "<script src=" not in alone.read_text()
    (tmp_path / SHARED_PLOTLY).write_text("not plotly")  # a file of that name is not the sweep's copy
    write_page(alone, "base.html.j2", title="t")
    assert "<script src=" not in alone.read_text()


def test_random_starts_and_stop_when_all_found_are_for_mock_worlds():
    for option in ({"random_starts": True}, {"stop_when": "all-found"}):
        with pytest.raises(ConfigError, match="need --mode mock"):
            RunConfig.of(mode="unity", window_titles=("Game",), **option).check()
