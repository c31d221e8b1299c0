"""Issue 49, part 2: `replicates:` names the grid's keys that repeat a condition (default [seed]); with
[seed, world-seed] a condition is its seeds on every layout, its interval a two-level bootstrap over them."""

import csv
from importlib.util import find_spec

import pytest

from explorer.sweep.stats import Bounds, hierarchical_interval, mean_interval
from explorer.sweep.sweep_file import load_sweep as read_sweep_file
from harness.sweeps import read_results, write_sweep
from tests.support.in_process import sweep_here

LAYOUTS = """\
out: {out}
grid:
  world-seed: [{layouts}]
  seed: [1, 2, 3]
  comm: [true, false]
fixed: {{world: "gen:hall?size=12x10", agents: 2, steps: 3}}
replicates: [seed, world-seed]
baseline: {{comm: true}}
metric: cell_coverage
"""


def conditions_csv(out):
    with open(out / "conditions.csv", newline="", encoding="utf-8") as file:
        return [row for row in csv.DictReader(file) if row["metric"] == "cell_coverage"]


def test_more_layouts_for_a_finished_sweep_run_only_the_new_runs_up_to_fifteen_per_condition(tmp_path):
    out = tmp_path / "out"
    assert sweep_here(write_sweep(tmp_path, LAYOUTS.format(out=out, layouts="1, 2"))).returncode == 0
    first = {row["run_dir"]: (out / row["run_dir"] / "summary.json").stat().st_mtime_ns for row in read_results(out)}
    result = sweep_here(write_sweep(tmp_path, LAYOUTS.format(out=out, layouts="1, 2, 3")))
    assert result.returncode == 0, result.stderr
    assert all((out / name / "summary.json").stat().st_mtime_ns == at for name, at in first.items())
    assert len(read_results(out)) == 18 and [row["n"] for row in conditions_csv(out)] == ["9", "9"]
    pooled = "gen:hall?size=12x10 (world seeds 1-3)"  # every layout the condition pools, wherever it is shown
    assert [row["world"] for row in conditions_csv(out)] == [pooled, pooled]
    assert f"<h2>Charts: {pooled}</h2>" in (out / "sweep.html").read_text(encoding="utf-8")
    if find_spec("pandas") and find_spec("pyarrow"):
        from explorer.api import load_sweep

        assert list(load_sweep(out).conditions["world_label"]) == [pooled, pooled]
    # Five layouts: one condition per comm setting of 15 runs each, paired with the baseline's, with intervals
    # of some width (the study of docs/sweeps.md, grown from the same finished sweep).
    assert sweep_here(write_sweep(tmp_path, LAYOUTS.format(out=out, layouts="1, 2, 3, 4, 5"))).returncode == 0
    by_condition = {row["condition"]: row for row in conditions_csv(out)}
    assert list(by_condition) == ["comm=true", "comm=false"] and len(read_results(out)) == 30
    assert all(row["n"] == "15" and float(row["high"]) > float(row["low"]) for row in by_condition.values())
    assert (by_condition["comm=false"]["baseline"], by_condition["comm=false"]["pairs"]) == ("comm=true", "15")


def test_the_world_label_of_layouts_not_in_a_row_lists_them(tmp_path):
    text = LAYOUTS.format(out=tmp_path / "out", layouts="4, 1, 2, 7")
    runs = read_sweep_file(write_sweep(tmp_path, text)).runs
    assert {run.world for run in runs} == {"gen:hall?size=12x10 (world seeds 1-2, 4, 7)"}
    one = read_sweep_file(write_sweep(tmp_path, text.replace("replicates: [seed, world-seed]", ""))).runs
    assert {run.world for run in one} == {f"gen:hall?size=12x10 (world seed {seed})" for seed in (1, 2, 4, 7)}


@pytest.mark.parametrize(
    "line, words",
    [
        (
            "replicates: [seed, layout]",
            "replicates: `layout` is not a key of the grid (they are world-seed, seed, comm)",
        ),
        ("replicates: seed", "`replicates` must be a non-empty list of the grid's keys"),
        ("replicates: [seed, seed]", "replicates: a key is named twice"),
    ],
)
def test_a_replicate_that_is_no_grid_key_is_one_line_and_exit_2(tmp_path, line, words):
    text = LAYOUTS.format(out=tmp_path / "out", layouts="1").replace("replicates: [seed, world-seed]", line)
    result = sweep_here(write_sweep(tmp_path, text), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert len(result.stderr.splitlines()) == 1 and words in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_two_level_bootstrap_is_deterministic_and_within_bounds():
    groups = [[0.1, 0.2, 0.3], [0.8, 0.9, None], [0.5]]
    first = hierarchical_interval(groups, Bounds(0.0, 1.0))
    assert first == hierarchical_interval(groups, Bounds(0.0, 1.0))  # the same resamples every time
    assert first.n == 6 and first.mean == pytest.approx(2.8 / 6)
    assert 0.0 <= first.low < first.mean < first.high <= 1.0
    # Groups that differ widen it past a flat bootstrap over the same values; one group is the flat one.
    flat = mean_interval([0.1, 0.2, 0.3, 0.8, 0.9, 0.5])
    assert first.high - first.low > flat.high - flat.low
    assert hierarchical_interval([[1, 2, 3]]) == mean_interval([1, 2, 3])
    assert hierarchical_interval([[None], [3]]) == mean_interval([3])
    assert hierarchical_interval([[2, 2], [2]], Bounds(0, 1)).high == 1  # clipped to what it can be
