"""Issue 49's study, done again: would a researcher's sweeps now tell them what the study asked?

- A search sweep (prior, no prior, random) on a generated house ranks the prior first, by success.
- A coverage sweep over `gen:house` with seeds 1-3 gives intervals of non-zero width: the seed places the team.
- `replicates: [seed, world-seed]` over 5 layouts gives one condition per comm setting, each with n = 15
  (tests/test_sweep_replicates.py, which grows a finished sweep to them).

Issue 62's study, planned before it runs: docs/sweeps.md's sweep (a coordinator or the prior against the plain
team, 5 layouts × 3 seeds) with `--dry-run --pilot 3` runs 3 of the plain team's runs, as the sweep's own, and
prints the plan with the smallest difference 15 runs can detect in success.
"""

from __future__ import annotations

import json
import math
import warnings

import pytest

from explorer.sweep.compare import number_text
from explorer.sweep.plan import detectable_difference
from harness.sweeps import write_sweep
from tests.support.in_process import sweep_here
from tests.support.optional import needs
from tests.test_sweep_docs import DOCS, example

# The house and budget of tests/test_sweep_metrics.py, with four seeds and the random baseline.
SEARCH = """\
out: {out}
conditions:
  - {{name: prior}}
  - {{name: no-prior, no-prior: true}}
  - {{name: random, model: random}}
grid: {{seed: [1, 2, 3, 4]}}
fixed: {{world: "gen:house", world-seed: 3, find: "toothbrush,laptop", agents: 2, steps: 30, random-starts: true}}
baseline: no-prior
metric: success
"""
COVERAGE = """\
out: {out}
grid: {{comm: [true, false], seed: [1, 2, 3]}}
fixed: {{world: "gen:house", agents: 2, steps: 12}}
metric: cell_coverage
"""


@pytest.fixture(scope="module")
def load_sweep():
    needs("pandas", "data")
    from explorer.api import load_sweep

    return load_sweep


def run_sweep(directory, text, load_sweep):
    sweep_file = write_sweep(directory, text.format(out=directory / "out"))
    result = sweep_here(sweep_file, "--parallel", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' warnings are no concern of a user's
        return load_sweep(directory / "out").conditions.set_index("condition")


def test_a_search_sweep_ranks_the_prior_first_by_success(tmp_path, load_sweep):
    conditions = run_sweep(tmp_path, SEARCH, load_sweep)
    success = conditions["success"]
    assert success.idxmax() == "prior" and success["prior"] > max(success["no-prior"], success["random"])
    assert (conditions.loc["prior", "success_n"], conditions.loc["prior", "pairs"]) == (4, 4)


def test_seeds_on_a_generated_house_give_intervals_of_some_width(tmp_path, load_sweep):
    conditions = run_sweep(tmp_path, COVERAGE, load_sweep)
    assert list(conditions.index) == ["comm=true", "comm=false"]
    assert (conditions["cell_coverage_n"] == 3).all()
    assert (conditions["cell_coverage_high"] > conditions["cell_coverage_low"]).all()


def test_the_study_planned_with_a_pilot_prints_the_smallest_difference_it_can_detect(tmp_path):
    study = example(DOCS[1], "the study: does a coordinator").replace("steps: 60", "steps: 30")  # quicker runs
    sweep_file = write_sweep(tmp_path, study)
    result = sweep_here(sweep_file, "--dry-run", "--pilot", "3", "--parallel", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "runs" / "sweep-study"
    piloted = [f"condition=plain,world-seed={layout},seed=1" for layout in (1, 2, 3)]  # a layout each, in turn
    assert sorted(path.name for path in out.iterdir() if path.is_dir() and path.name != ".sweep") == piloted
    assert "Dry run of a sweep of 45 runs in runs/sweep-study: 3 complete already (would be skipped), 42 to run. " in (
        result.stdout
    )
    assert (
        "Analysis plan: 3 conditions × 15 runs (5 layouts × 3 seeds); baseline: plain; headline: success (share of "
        "runs that found every target); intervals: each condition's by Wilson's score interval;" in result.stdout
    )
    found = [json.loads((out / name / "summary.json").read_text())["search"]["all_found"] for name in piloted]
    share = sum(found) / len(found)
    spread = math.sqrt(share * (1 - share)) or 0.5  # a pilot without spread: p = 0.5, the widest
    smallest = (
        "Smallest difference 15 runs can detect at 80% power (two-sided 5%): "
        f"{number_text(detectable_difference(spread, 15))} in success"
    )
    assert smallest in result.stdout
    # The pilot's runs are the sweep's: a dry run now counts them complete, and plans from them.
    again = sweep_here(sweep_file, "--dry-run", cwd=tmp_path)
    assert "3 complete already (would be skipped), 42 to run. Nothing was run or written." in again.stdout
    assert smallest in again.stdout


def smaller_study() -> str:
    """docs/sweeps.md's study (a coordinator or no semantic prior against the plain team) on 2 layouts × 2 seeds
    of 40 steps: quicker, and with 40 steps some runs miss a target."""
    study = example(DOCS[1], "the study: does a coordinator")
    smaller = study.replace("world-seed: [1, 2, 3, 4, 5], seed: [1, 2, 3]", "world-seed: [1, 2], seed: [1, 2]")
    assert smaller != study and "steps: 60" in smaller
    braces = smaller.replace("{", "{{").replace("}", "}}")  # run_sweep formats `out` into it
    return braces.replace("steps: 60", "steps: 40").replace("out: runs/sweep-study", "out: {out}")


def test_the_study_counts_failures_in_the_time_to_success_and_gives_success_differences_some_width(
    tmp_path, load_sweep
):
    conditions = run_sweep(tmp_path, smaller_study(), load_sweep)
    runs = load_sweep(tmp_path / "out").runs
    failures = runs.groupby("condition")["all_found"].apply(lambda found: int((~found.astype(bool)).sum()))
    assert failures.sum() > 0  # 40 steps: some runs miss a target, or there would be no failure to count
    for condition, row in conditions.iterrows():
        # The time to success counts every run, those that failed censored; the successes' mean only the others.
        assert (row["steps_to_all_n"], row["steps_to_all_censored"]) == (4, failures[condition])
        assert row["steps_to_all_mean_of_successes_n"] == 4 - failures[condition]
    coordinator, no_prior = conditions.loc["coordinator"], conditions.loc["no-prior"]
    assert coordinator["steps_to_all_difference_n"] == coordinator["pairs"] == 4  # its failures in the pairs too
    # Newcombe's interval: some width, however the four pairs agree.
    assert no_prior["success_difference_high"] > no_prior["success_difference_low"]
    assert coordinator["success_difference_high"] > coordinator["success_difference_low"]
    assert 0 <= no_prior["success_probability_of_improvement"] <= 1
