"""Issue 49's study, done again: would a researcher's sweeps now tell them what the study asked?

- A search sweep (prior, no prior, random) on a generated house ranks the prior first, by success.
- A coverage sweep over `gen:house` with seeds 1-3 gives intervals of non-zero width: the seed places the team.
- `replicates: [seed, world-seed]` over 5 layouts gives one condition per comm setting, each with n = 15.
"""

from __future__ import annotations

import warnings

import pytest

from tests.support.optional import needs
from tests.support.sweeps import sweep, write_sweep
from tests.test_sweep_replicates import LAYOUTS

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
    result = sweep(sweep_file, "--parallel", "2")
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


def test_seeds_on_five_layouts_make_one_condition_per_comm_setting_of_fifteen_runs(tmp_path, load_sweep):
    conditions = run_sweep(tmp_path, LAYOUTS.replace("{layouts}", "1, 2, 3, 4, 5"), load_sweep)
    assert list(conditions.index) == ["comm=true", "comm=false"]
    assert (conditions["runs"] == 15).all() and (conditions["cell_coverage_n"] == 15).all()
    assert (conditions["cell_coverage_high"] > conditions["cell_coverage_low"]).all()
    assert conditions.loc["comm=false", ["baseline", "pairs"]].tolist() == ["comm=true", 15]
