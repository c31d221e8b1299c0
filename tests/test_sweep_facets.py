"""A sweep's page read across its axes (issue 49, part 4): a chart with a column per world and a colour per comm
setting, the paired differences as a forest plot, and each condition over the worlds as an interquartile mean
with a stratified bootstrap interval."""

from __future__ import annotations

import pytest

from explorer.sweep.compare import Metric, RunRow, compare
from explorer.sweep.facets import _placed
from explorer.sweep.stats import Bounds, iqm, stratified_iqm_interval
from harness.sweeps import write_sweep
from tests.support.in_process import sweep_here
from tests.test_sweep import SWEEP as PLAIN_SWEEP

pytest_plugins = ("tests.support.browser",)
SWEEP = PLAIN_SWEEP + "baseline: {{comm: true}}\n"  # two worlds by comm, paired against messages on


def test_the_iqm_is_the_mean_of_the_middle_half():
    assert iqm([1, 2, 3, 4, 5, 6, 7, 8]) == 4.5  # the mean of 3..6
    assert iqm([8, 1, 7, 2, 6, 3, 5, 4]) == 4.5
    assert iqm([1, 2, 3, 100]) == 2.5  # a run far off is cut
    assert iqm([3]) == 3


def test_the_stratified_bootstrap_interval_is_bounded_and_deterministic():
    strata = [[0.1, 0.4, 0.5, 0.9], [0.2, 0.3, 0.8, 1.0]]
    interval = stratified_iqm_interval(strata, Bounds(0.0, 1.0))
    assert interval.n == 8
    assert interval.low is not None and interval.high is not None and interval.mean is not None
    assert 0.0 <= interval.low <= interval.mean <= interval.high <= 1.0
    assert interval.low < interval.high
    assert stratified_iqm_interval(strata, Bounds(0.0, 1.0)) == interval
    assert stratified_iqm_interval([[None, 2.0], [None]]).low is None  # one value: no interval
    assert stratified_iqm_interval([[None]]).mean is None


def test_resampling_never_mixes_the_strata():
    # Each world's runs agree, so a resample within each world is the runs themselves: no spread at all. One
    # that mixed the worlds would draw 5 threes or 5 ones at times, and spread.
    interval = stratified_iqm_interval([[1.0, 1.0, 1.0], [3.0, 3.0]])
    assert interval.mean == iqm([1, 1, 1, 3, 3])
    assert interval.low == interval.high == interval.mean


def test_one_world_gives_a_column_per_the_first_axis_and_a_colour_per_the_others():
    rows = [
        RunRow(f"agents={agents},comm={comm},seed=1", f"agents={agents}, comm={comm}", "apartment",
               {"agents": agents, "comm": comm}, (1,), "completed", {"objects_found": 3}, [])
        for agents in ("2", "3")
        for comm in ("true", "false")
    ]  # fmt: skip
    placed = _placed(compare(rows, (Metric("objects_found", "objects found"),), None))
    assert [(column, colour) for column, colour, _ in placed] == [
        ("agents=2", "comm=true"),
        ("agents=2", "comm=false"),
        ("agents=3", "comm=true"),
        ("agents=3", "comm=false"),
    ]
    alone = _placed(compare(rows[:2], (Metric("objects_found", "objects found"),), None))
    assert [(column, colour) for column, colour, _ in alone] == [("", "comm=true"), ("", "comm=false")]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    directory = tmp_path_factory.mktemp("facets")
    out = directory / "out"
    result = sweep_here(write_sweep(directory, SWEEP.format(out=out)), "--parallel", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return out / "sweep.html"


def test_the_page_has_a_column_per_world_a_forest_plot_and_the_iqm_over_worlds(page, browser):
    from selenium.webdriver.common.by import By

    from tests.support.browser import PageVisit

    visit = PageVisit(browser, page)
    assert visit.console_errors == [] and visit.requests == []
    facets = browser.execute_script(
        "const g = document.getElementById('facets');"
        "return {titles: g.layout.annotations.map(a => a.text),"
        " traces: g.data.map(t => [t.xaxis, t.name, t.showlegend])};"
    )
    assert facets["titles"] == ["apartment", "office"]
    assert sorted(facets["traces"]) == [
        ["x", "comm=false", True],
        ["x", "comm=true", True],
        ["x2", "comm=false", False],
        ["x2", "comm=true", False],
    ]
    forest = browser.execute_script("return document.getElementById('forest').data.map(t => t.y[0]);")
    assert forest == [
        "world=apartment, comm=false − world=apartment, comm=true",
        "world=office, comm=false − world=office, comm=true",
    ]
    rows = [
        [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "th, td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#iqm tr")[1:]
    ]
    assert [row[:2] for row in rows] == [["comm=true", "2"], ["comm=false", "2"]]
    assert all("[" in row[2] for row in rows)  # 4 runs over 2 worlds: an IQM with its interval
