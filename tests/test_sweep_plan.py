"""A sweep's analysis plan (explorer/sweep/plan.py): the smallest difference its runs can detect, worked out
from a pilot's spread, and the lines a dry run prints: n per condition and how it nests, the baseline, the
headline and the intervals compare.py gives it."""

from __future__ import annotations

import math

import pytest

from explorer.cli.main import main
from explorer.records.errors import ConfigError
from explorer.sweep.compare import RunRow, number_text
from explorer.sweep.metrics import METRICS, STEPS_TO_ALL, SUCCESS
from explorer.sweep.plan import (
    analysis_plan,
    detectable_difference,
    estimate_pilot,
    interval_methods,
    pilot_runs,
    plan_lines,
)
from explorer.sweep.sweep_file import load_sweep
from harness.sweeps import write_sweep

# (z 0.975 + z 0.80) · √2: the difference n = 1 pair detects for a spread of 1
FACTOR = (1.959963985 + 0.841621234) * math.sqrt(2)
STUDY = """\
out: {out}
conditions:
  - {{name: plain}}
  - {{name: coordinator, coordinator: offline}}
  - {{name: no-prior, no-prior: true}}
grid: {{world-seed: [1, 2], seed: [1, 2, 3]}}
fixed: {{world: "gen:house?size=24x14", find: [toothbrush, laptop], agents: 2, steps: 20}}
replicates: [seed, world-seed]
baseline: plain
"""
SEEDS = """\
out: {out}
grid: {{comm: [true, false], seed: [1, 2, 3]}}
fixed: {{world: "gen:hall?size=12x10", agents: 2, steps: 5}}
{baseline}"""


def row(condition: str, status: str = "completed", **metrics) -> RunRow:
    return RunRow(f"{condition}-{len(metrics)}", condition, "w", {}, ("1",), status, metrics, [])


def test_the_detectable_difference_is_2_8_paired_spreads_over_root_n():
    assert detectable_difference(1.0, 1) == pytest.approx(FACTOR)
    assert detectable_difference(1.0, 16) == pytest.approx(0.99050, abs=1e-5)
    assert detectable_difference(3.0, 9) == pytest.approx(FACTOR)  # σ 3 over √9: as σ 1 with one pair
    assert detectable_difference(2.0, 15) == pytest.approx(2 * detectable_difference(1.0, 15))


def test_a_pilots_spread_is_its_sample_sd_pooled_within_conditions():
    one = estimate_pilot([row("a", steps_to_all=v) for v in (10, 12, 14, 16)], STEPS_TO_ALL, "a")
    assert (one.runs, one.mean, one.spread) == (4, 13, pytest.approx(math.sqrt(20 / 3)))
    # Variances 2 and 8 over one degree of freedom each: 5, whatever the conditions' means.
    rows = [row("a", steps_to_all=v) for v in (1, 3)] + [row("b", steps_to_all=v) for v in (10, 14)]
    assert estimate_pilot(rows, STEPS_TO_ALL, "both").spread == pytest.approx(math.sqrt(5))


def test_a_share_of_runs_has_the_spread_of_its_proportion():
    half = estimate_pilot([row("a", all_found=v) for v in (True, False, True, False)], SUCCESS, "a")
    assert (half.mean, half.spread, half.assumed) == (0.5, 0.5, "")
    quarter = estimate_pilot([row("a", all_found=v) for v in (True, False, False, False)], SUCCESS, "a")
    assert quarter.spread == pytest.approx(math.sqrt(0.25 * 0.75))
    every = estimate_pilot([row("a", all_found=True) for _ in range(3)], SUCCESS, "a")
    assert (every.mean, every.spread) == (1, 0.5) and "widest" in every.assumed  # p = 0.5, not a spread of 0


def test_fewer_than_two_values_or_none_that_differ_give_no_estimate():
    assert estimate_pilot([row("a", all_found=True)], SUCCESS, "a") is None
    assert estimate_pilot([row("a", all_found=True), row("b", all_found=False)], SUCCESS, "a") is None
    assert estimate_pilot([row("a", "failed", all_found=True), row("a", all_found=True)], SUCCESS, "a") is None
    assert estimate_pilot([row("a", steps_to_all=7), row("a", steps_to_all=7)], STEPS_TO_ALL, "a") is None
    assert estimate_pilot([row("a", steps_to_all=None), row("a", steps_to_all=7)], STEPS_TO_ALL, "a") is None


def test_a_run_that_never_got_there_counts_where_it_stopped_as_in_the_paired_differences():
    rows = [row("a", steps_to_all=None, steps_run=30), row("a", steps_to_all=10, steps_run=30)]
    assert estimate_pilot(rows, STEPS_TO_ALL, "a").spread == pytest.approx(math.sqrt(200))  # 30 and 10


def test_the_interval_methods_follow_the_metric_and_the_nesting():
    paired_shares = ("Wilson's score interval", "Newcombe's interval for paired proportions")
    assert interval_methods(SUCCESS, "") == interval_methods(SUCCESS, "5 layouts") == paired_shares
    assert interval_methods(METRICS[0], "") == ("a bootstrap over the runs", "a bootstrap over the pairs")
    assert interval_methods(METRICS[0], "5 layouts") == (
        "a two-level bootstrap over the 5 layouts, then the runs within each",
        "a two-level bootstrap over the 5 layouts, then the pairs within each",
    )
    assert interval_methods(STEPS_TO_ALL, "") == (
        "the Kaplan–Meier median's interval, a run that never got there censored where it stopped",
        "a bootstrap over the pairs, a run that never got there counted where it stopped",
    )


def study_rows(sweep, found: dict[str, bool]) -> list[RunRow]:
    """The rows of the runs named in `found`, finished, each with its success."""
    runs = {run.name: run for run in sweep.runs}
    return [
        RunRow(name, run.condition, "", run.factors, run.replicate, "completed", {"all_found": found_all}, [])
        for name, found_all in found.items()
        for run in [runs[name]]
    ]


def test_a_study_on_layouts_is_planned_from_its_baselines_finished_runs(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, STUDY.format(out=tmp_path / "out")))
    plain = [run.name for run in sweep.runs if run.condition == "plain"]
    lines = plan_lines(analysis_plan(sweep, []))
    assert lines[0] == (
        "Analysis plan: 3 conditions × 6 runs (2 layouts × 3 seeds); baseline: plain; headline: success (share of "
        "runs that found every target); intervals: each condition's by Wilson's score interval; the paired "
        "differences from plain by Newcombe's interval for paired proportions."
    )
    assert "not estimated" in lines[1] and "--pilot K" in lines[1]
    rows = study_rows(sweep, dict(zip(plain, [True, False, True, True])))
    mdd, on_layouts = (number_text(detectable_difference(math.sqrt(0.75 * 0.25), n)) for n in (6, 2))
    assert lines[1] != (line := plan_lines(analysis_plan(sweep, rows))[1])
    assert line.startswith(f"Smallest difference 6 runs can detect at 80% power (two-sided 5%): {mdd} in success")
    assert "(a pilot of 4 runs of plain: success 0.75, sd 0.433)" in line
    assert line.endswith(f"If the difference varies among the 2 layouts, only they count as n: {on_layouts}.")


def test_without_the_baselines_runs_every_conditions_finished_runs_are_pooled(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, STUDY.format(out=tmp_path / "out")))
    others = [run.name for run in sweep.runs if run.condition != "plain"]
    plan = analysis_plan(sweep, study_rows(sweep, dict(zip(others, [True, False, True, False]))))
    assert (plan.pilot.source, plan.pilot.runs, plan.pilot.spread) == ("every condition", 4, 0.5)


def test_a_flat_sweep_of_seeds_with_and_without_a_baseline(tmp_path):
    flat = load_sweep(write_sweep(tmp_path, SEEDS.format(out=tmp_path / "out", baseline="baseline: {comm: true}")))
    lines = plan_lines(analysis_plan(flat, []))
    assert lines[0].startswith("Analysis plan: 2 conditions × 3 runs (3 seeds); baseline: comm=true; headline: ")
    assert lines[0].endswith(
        "objects_found, objects found; intervals: each condition's by a bootstrap over the runs; "
        "the paired differences from comm=true by a bootstrap over the pairs."
    )
    alone = load_sweep(write_sweep(tmp_path, SEEDS.format(out=tmp_path / "out", baseline="")))
    line, detectable = plan_lines(analysis_plan(alone, []))
    assert "baseline: none (no paired differences)" in line and line.endswith("by a bootstrap over the runs.")
    assert "finished runs of comm=true are too few" in detectable  # a pilot would run the first condition's


def test_a_pilot_takes_a_run_on_each_layout_in_turn(tmp_path):
    sweep = load_sweep(write_sweep(tmp_path, STUDY.format(out=tmp_path / "out")))
    names = [run.name for run in pilot_runs(sweep, 4)]
    assert names == [
        f"condition=plain,world-seed={layout},seed={seed}" for layout, seed in ((1, 1), (2, 1), (1, 2), (2, 2))
    ]
    with pytest.raises(ConfigError, match="at least 2"):
        pilot_runs(sweep, 1)
    with pytest.raises(ConfigError, match="plain, has 6 runs"):
        pilot_runs(sweep, 7)


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["--pilot", "3"], "--pilot goes with --dry-run"),
        (["--dry-run", "--pilot", "1"], "--pilot must be at least 2, not 1"),
        (["--dry-run", "--pilot", "7"], "--pilot 7: the condition it runs, plain, has 6 runs"),
    ],
)
def test_a_misplaced_or_impossible_pilot_is_one_line_and_exit_2(tmp_path, capsys, arguments, error):
    sweep_file = write_sweep(tmp_path, STUDY.format(out=tmp_path / "out"))
    assert main(["--sweep", str(sweep_file), *arguments]) == 2
    captured = capsys.readouterr()
    assert error in captured.err and len(captured.err.splitlines()) == 1
    assert not (tmp_path / "out").exists()
