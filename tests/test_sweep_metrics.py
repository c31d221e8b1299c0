"""Metrics that follow the task (issue 49, part 1): a sweep of search runs leads with success, the share of runs
that found every target (with Wilson's interval), and reports the steps to all the targets and to each, in
results.csv, conditions.csv, the console and sweep.html; a sweep file's `metric:` names the headline instead."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from explorer.sweep.compare import RunRow
from explorer.sweep.metrics import METRICS, SUCCESS, sweep_metrics
from explorer.sweep.stats import paired_proportion_interval, proportion_interval
from explorer.sweep.sweep_file import SweepError, load_sweep
from harness.sweeps import read_results, write_sweep
from tests.support.in_process import sweep_here
from tests.support.optional import needs

# Seed 1 tells the two apart within 30 steps: with the prior both targets are found by step 19, without it
# not; on seed 3 both find them. Objects found cannot tell them apart: the prior's runs end as soon as it
# has both targets.
SEARCH = """\
out: {out}
conditions:
  - {{name: no-prior, no-prior: true}}
  - {{name: prior}}
grid: {{seed: [1, 3]}}
fixed: {{world: "gen:house", world-seed: 3, find: "toothbrush,laptop", agents: 2, steps: 30, random-starts: true}}
baseline: no-prior
{metric}"""
NAMES = [f"condition={name},seed={seed}" for name in ("no-prior", "prior") for seed in (1, 3)]


@pytest.fixture(scope="module")
def search_sweep(tmp_path_factory):
    """Two conditions, with and without the semantic prior, two seeds each: the sweep file, `out` and the result."""
    directory = tmp_path_factory.mktemp("search")
    out = directory / "out"
    sweep_file = write_sweep(directory, SEARCH.format(out=out, metric=""))
    result = sweep_here(sweep_file, "--parallel", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return sweep_file, out, result


def conditions_csv(out: Path) -> list[dict[str, str]]:
    with open(out / "conditions.csv", newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def header_cells(stdout: str) -> list[str]:
    """The first console table's column headers."""
    line = next(line for line in stdout.splitlines() if "┃ condition " in line)
    return [cell.strip() for cell in line.strip("┃ ").split("┃")]


def console_row(stdout: str, label: str) -> list[str]:
    line = next(line for line in stdout.splitlines() if line.startswith(f"│ {label} "))
    return [cell.strip() for cell in line.strip("│ ").split("│")]


def test_the_wilson_interval_matches_newcombe_s_published_figures():
    # Newcombe (1998), Statistics in Medicine 17, table I, method 3 (the Wilson score interval), to 4 places.
    for successes, runs, low, high in [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0, 0.1611)]:
        interval = proportion_interval(successes, runs)
        assert (interval.n, interval.mean) == (runs, successes / runs)
        assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)
    assert proportion_interval(1, 29).low == pytest.approx(0.0061, abs=1e-4)
    # Three of three is not certainty, as a bootstrap's [1, 1] would say; no runs give no share.
    three = proportion_interval(3, 3)
    assert (round(three.low, 4), three.high) == (0.4385, 1.0)
    assert proportion_interval(0, 0).mean is None


def test_a_search_sweep_ranks_the_prior_first_by_success(search_sweep):
    _sweep_file, out, result = search_sweep
    headers = header_cells(result.stdout)
    assert headers[:4] == ["condition", "finished", "success", "steps to all targets"]
    assert headers.index("success") < headers.index("objects found")
    prior, no_prior = console_row(result.stdout, "prior"), console_row(result.stdout, "no-prior")
    assert prior[2] == "1 [0.342, 1]" and no_prior[2] == "0.5 [0.0945, 0.905]"
    assert "95% Wilson interval" in result.stdout
    # The paired table leads with it as well: the prior found every target on one seed more of the two, with
    # Newcombe's interval for paired proportions (a bootstrap over the two pairs said [0, +1]). Its runs beat
    # the other's failure and tie its success: a probability of improvement in success of (1 + 0.5) / 2.
    paired = console_row(result.stdout, "prior minus no-prior")
    newcombe = paired_proportion_interval([(True, True), (True, False)])
    assert paired[1:3] == ["2", f"+0.5 [{newcombe.low:.3g}, +{newcombe.high:.3g}]"]
    assert "Newcombe's interval for paired proportions" in result.stdout
    improvement = console_row(result.stdout, "prior over no-prior")
    assert improvement[1].startswith("0.75 [") and "Probability of improvement over the baseline" in result.stdout
    for name in NAMES:  # each run's line says how many targets it found
        summary = json.loads((out / name / "summary.json").read_text())
        found = len(summary["search"]["targets_found"])
        assert f"{name}: completed, {len(summary['objects_discovered'])} of 18 objects, {found} of 2 targets" in (
            result.stdout
        )


def test_search_runs_give_their_targets_steps_in_results_csv(search_sweep):
    _sweep_file, out, _result = search_sweep
    rows = read_results(out)
    assert [row["run_dir"] for row in rows] == NAMES
    columns = list(rows[0])
    start = columns.index("status") + 1
    assert columns[start : start + 6] == ["all_found", "steps_to_all", "steps_to_toothbrush", "steps_to_laptop"] + [
        "spl",
        "objects_found",
    ]
    for row in rows:
        config = json.loads((out / row["run_dir"] / "config.json").read_text())
        assert config["prior"] == (row["condition"] == "prior")  # no-prior: true is --no-prior, not --no-comm
        assert config["comm"] == "all"
        search = json.loads((out / row["run_dir"] / "summary.json").read_text())["search"]
        assert row["all_found"] == str(search["all_found"]).lower()
        assert row["steps_to_all"] == ("" if search["steps_to_all"] is None else str(search["steps_to_all"]))
        for target, step in search["steps_to_target"].items():
            assert row[f"steps_to_{target}"] == ("" if step is None else str(step))
        # SPL: 0 for a run that missed a target, else in (0, 1], as the summary has it.
        assert float(row["spl"]) == search["spl"] and (search["spl"] > 0) == search["all_found"]
    assert [row["all_found"] for row in rows] == ["false", "true", "true", "true"]


def test_conditions_csv_leads_with_success_and_counts_steps_to_all_over_every_run(search_sweep):
    _sweep_file, out, _result = search_sweep
    rows = conditions_csv(out)
    assert [row["metric"] for row in rows[:7]] == [
        "success",
        "steps_to_all",
        "steps_to_all_mean_of_successes",
        "steps_to_toothbrush",
        "steps_to_laptop",
        "spl",
        "objects_found",
    ]
    figures = {(row["condition"], row["metric"]): row for row in rows}
    wilson = proportion_interval(1, 2)
    success = figures[("no-prior", "success")]
    assert (success["n"], float(success["mean"])) == ("2", 0.5)
    assert (float(success["low"]), float(success["high"])) == pytest.approx((wilson.low, wilson.high), abs=1e-6)
    assert figures[("prior", "success")]["mean"] == "1.0"
    results = {row["run_dir"]: row for row in read_results(out)}
    found_at = float(results["condition=no-prior,seed=3"]["steps_to_all"])
    # The mean of the successes counts only the run that found both targets; the Kaplan–Meier median counts
    # the other too, censored at its last step (30): half the runs had found them by `found_at`.
    successes = figures[("no-prior", "steps_to_all_mean_of_successes")]
    assert (successes["statistic"], successes["n"], float(successes["mean"])) == ("mean", "1", found_at)
    steps = figures[("no-prior", "steps_to_all")]
    assert (steps["statistic"], steps["n"], steps["censored"], float(steps["mean"])) == (
        "km_median",
        "2",
        "1",
        found_at,
    )
    assert results["condition=no-prior,seed=1"]["steps_run"] == "30" and found_at < 30
    paired = figures[("prior", "success")]
    assert (paired["baseline"], paired["pairs"], float(paired["difference"])) == ("no-prior", "2", 0.5)
    spl = figures[("no-prior", "spl")]  # every finished run counts, the one that missed a target as 0
    mine = [float(results[f"condition=no-prior,seed={seed}"]["spl"]) for seed in (1, 3)]
    assert spl["n"] == "2" and 0.0 in mine and float(spl["mean"]) == pytest.approx(sum(mine) / 2, abs=1e-6)


def test_load_sweep_gives_the_median_its_censored_runs_and_the_probability_of_improvement(search_sweep):
    needs("pandas", "data")
    from explorer.api import load_sweep

    _sweep_file, out, _result = search_sweep
    conditions = load_sweep(out).conditions.set_index("condition")
    figures = {(row["condition"], row["metric"]): row for row in conditions_csv(out)}
    no_prior = conditions.loc["no-prior"]
    assert (no_prior["steps_to_all_n"], no_prior["steps_to_all_censored"]) == (2, 1)
    assert no_prior["steps_to_all"] == float(figures[("no-prior", "steps_to_all")]["mean"])
    assert no_prior["steps_to_all_mean_of_successes_n"] == 1
    prior = conditions.loc["prior"]
    assert prior["success_probability_of_improvement"] == 0.75
    assert prior["success_probability_of_improvement_low"] <= 0.75 <= prior["success_probability_of_improvement_high"]
    assert prior["success_difference_low"] < 0 < 0.5 < prior["success_difference_high"] < 1  # Newcombe's
    # Only a median has censored runs, and only a metric with a direction a probability of improvement.
    assert "objects_found_censored" not in conditions.columns and "steps_to_90_objects_censored" in conditions.columns
    assert "messages_per_agent_step_probability_of_improvement" not in conditions.columns


def test_the_page_leads_with_success_and_draws_the_share_of_runs_done_by_step(search_sweep):
    _sweep_file, out, _result = search_sweep
    page = (out / "sweep.html").read_text(encoding="utf-8")
    conditions = page[page.index('<table id="conditions">') :]
    first_metric = re.findall(r"<tr><th>([^<]+)</th><td", conditions)[0]
    assert first_metric == SUCCESS.label
    assert 'id="success-1"' in page and "Runs that had found every target, by step" in page
    runs = page[page.index('<table id="runs">') :]
    assert '<td class="num">yes</td>' in runs and '<td class="num">no</td>' in runs


def test_metric_in_the_sweep_file_names_the_headline(search_sweep):
    sweep_file, out, _result = search_sweep
    sweep_file.write_text(SEARCH.format(out=out, metric="metric: steps_to_90\n"), encoding="utf-8")
    result = sweep_here(sweep_file)  # every run is complete: only the results are written again
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 complete already (skipped), 0 to run" in result.stdout
    assert header_cells(result.stdout)[2:5] == ["steps to 90%", "success", "steps to all targets"]
    assert conditions_csv(out)[0]["metric"] == "steps_to_90_objects"
    sweep_file.write_text(SEARCH.format(out=out, metric=""), encoding="utf-8")


def test_an_unknown_metric_is_refused_in_one_line(tmp_path):
    sweep_file = write_sweep(tmp_path, SEARCH.format(out=tmp_path / "out", metric="metric: objects"))
    with pytest.raises(SweepError, match=r"metric: no metric is named 'objects' \(they are success, steps_to_all"):
        load_sweep(sweep_file)
    result = sweep_here(sweep_file)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "no metric is named 'objects'" in result.stderr and not (tmp_path / "out").exists()


def test_a_coverage_sweep_leads_with_objects_found_as_before():
    rows = [RunRow("a", "a", "w", {}, (1,), "completed", {"objects_found": 3}, [])]
    assert sweep_metrics(rows, None) == METRICS
    searching = RunRow("b", "b", "w", {}, (1,), "completed", {"all_found": True}, [], ("laptop",))
    assert [m.name for m in sweep_metrics([searching], None)[:4]] == [
        "success",
        "steps_to_all",
        "steps_to_all_mean_of_successes",
        "steps_to_laptop",
    ]
    # A sweep of both kinds keeps today's headline and adds the search figures after it.
    assert [m.name for m in sweep_metrics([*rows, searching], None)[:2]] == ["objects_found", "success"]
    assert sweep_metrics(rows, "steps_to_90_objects")[0].name == "steps_to_90_objects"


def test_a_short_table_leaves_out_a_figure_no_condition_counts_two_runs_in():
    from explorer.sweep.compare import ConditionFigures
    from explorer.sweep.metrics import leading
    from explorer.sweep.stats import Interval

    metrics = sweep_metrics([], "success")
    counts = {"objects_found": 3, "seconds_to_90_objects": 1}  # one run of three got to 90%: says nothing
    figures = {m.name: Interval(counts.get(m.name, 3), 1.0, None, None) for m in metrics}
    conditions = [ConditionFigures(label, "w", [], [], figures) for label in ("a", "b")]
    shown = leading(metrics, ("objects_found", "seconds_to_90_objects"), conditions)
    assert shown[0] == "success" and "objects_found" in shown and "seconds_to_90_objects" not in shown
    assert "seconds_to_90_objects" in leading(metrics, ("objects_found", "seconds_to_90_objects"))
