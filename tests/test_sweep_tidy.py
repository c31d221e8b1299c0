"""A sweep's results as pandas tables: `load_sweep` on a real sweep, the parquet files the sweep writes, and the
README's example run on it."""

import json
import sys

import pytest

from explorer.records.errors import ConfigError
from explorer.sweep.tidy import _run_steps
from harness.sweeps import write_sweep
from tests.support.in_process import sweep_here
from tests.support.optional import needs
from tests.test_examples import run_example

SWEEP = """\
out: {out}
grid:
  comm: [true, false]
  world: [apartment, office]
  seed: [1]
fixed:
  agents: 2
  steps: 3
  random-starts: true
"""


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory):
    """comm on/off x 2 worlds, one seed, 3 steps each: the sweep directory."""
    needs("pandas", "data")
    needs("pyarrow", "data")
    directory = tmp_path_factory.mktemp("tidy")
    result = sweep_here(write_sweep(directory, SWEEP.format(out=directory / "out")), "--parallel", "2")
    assert result.returncode == 0, result.stderr
    return directory / "out"


def test_the_runs_table_has_a_row_per_run_and_a_column_per_option_and_metric(finished_sweep):
    from explorer.api import load_sweep

    runs = load_sweep(finished_sweep).runs
    assert len(runs) == 4
    assert list(runs.columns[:9]) == ["comm", "world", "seed", "agents", "steps", "random-starts"] + [
        "run_dir",
        "condition",
        "status",
    ]
    assert {"objects_found", "cell_coverage", "steps_to_90_objects", "wall_seconds"} <= set(runs.columns)
    field = {f"{figure}_to_{share}_cells" for figure in ("steps", "distance") for share in (50, 90, 99)}
    assert field | {"distance"} <= set(runs.columns) and "spl" not in runs.columns  # no search task
    assert runs["comm"].dtype == bool and runs["seed"].tolist() == [1, 1, 1, 1]
    assert runs["condition"].tolist() == [
        "comm=true, world=apartment",
        "comm=true, world=office",
        "comm=false, world=apartment",
        "comm=false, world=office",
    ]
    summary = json.loads((finished_sweep / runs["run_dir"][0] / "summary.json").read_text())
    assert runs["objects_found"][0] == len(summary["objects_discovered"])
    assert (
        runs["distance"][0] == summary["team"]["distance"] == sum(a["distance"] for a in summary["per_agent"].values())
    )


def test_the_conditions_table_has_a_column_per_grid_axis_beside_the_combined_name(finished_sweep):
    from explorer.api import load_sweep

    data = load_sweep(finished_sweep)
    conditions = data.conditions
    assert list(conditions.columns[:6]) == ["condition", "comm", "world", "world_label", "runs", "finished"]
    assert conditions[["comm", "world"]].values.tolist() == [
        [True, "apartment"],
        [True, "office"],
        [False, "apartment"],
        [False, "office"],
    ]
    row = conditions.iloc[0]
    assert (row["runs"], row["finished"], row["objects_found_n"]) == (1, 1, 1)
    assert row["objects_found"] == data.runs["objects_found"][0]  # one seed: the mean is its run's, with no interval
    assert {"objects_found_low", "objects_found_high", "cell_coverage", "cell_coverage_n"} <= set(conditions.columns)
    assert "objects_found_difference" not in conditions.columns  # no baseline


def test_the_steps_table_has_a_row_per_run_and_step(finished_sweep):
    from explorer.api import load_sweep

    data = load_sweep(finished_sweep)
    steps = data.steps
    assert steps.groupby("run_dir").size().to_dict() == dict.fromkeys(data.runs["run_dir"], 3)
    for name, run in steps.groupby("run_dir"):
        summary = json.loads((finished_sweep / name / "summary.json").read_text())
        assert run["step"].tolist() == [1, 2, 3]
        assert run["objects_found"].tolist() == [found for _, found in summary["discovery_curve"]]
        assert run["cells_seen"].iloc[-1] == summary["team"]["cells_seen"]
        assert run["messages_sent"].iloc[-1] == summary["messages"]["sent"]
        assert run["distance"].tolist() == [walked for walked, _ in summary["team"]["cells_by_distance"]]
        assert run["distance"].iloc[-1] <= summary["team"]["distance"]  # the last step's moves come after it
    assert steps["targets_found"].isna().all()  # no search task
    assert (steps.loc[steps["condition"].str.startswith("comm=false"), "messages_sent"] == 0).all()


def test_the_parquet_files_are_what_load_sweep_gives(finished_sweep, tmp_path):
    import pandas

    from explorer.api import load_sweep

    data = load_sweep(finished_sweep)
    pandas.testing.assert_frame_equal(pandas.read_parquet(finished_sweep / "runs.parquet"), data.runs)
    pandas.testing.assert_frame_equal(pandas.read_parquet(finished_sweep / "steps.parquet"), data.steps)
    # Without them (a sweep run without pyarrow) the same tables come from the sweep's files.
    copy = tmp_path / "copy"
    for entry in finished_sweep.rglob("*"):
        if entry.is_file() and entry.suffix != ".parquet":
            (copy / entry.relative_to(finished_sweep)).parent.mkdir(parents=True, exist_ok=True)
            (copy / entry.relative_to(finished_sweep)).write_bytes(entry.read_bytes())
    again = load_sweep(copy)
    pandas.testing.assert_frame_equal(again.runs, data.runs)
    pandas.testing.assert_frame_equal(again.steps, data.steps)


def test_the_readme_example_reads_the_tables(finished_sweep, tmp_path):
    result = run_example("examples/sweep_tables.py", tmp_path, str(finished_sweep))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["comm", "world", "objects_found", "objects_found_low", "objects_found_high"]
    assert lines[1].split()[:2] == ["True", "apartment"]
    assert "cells_seen" not in result.stderr and len(lines) == 5 + 2 + 3  # 4 conditions, 2 header lines, 3 steps


def test_a_folder_that_is_no_sweep_is_refused_in_one_line(tmp_path):
    needs("pandas", "data")
    from explorer.api import load_sweep

    with pytest.raises(ConfigError) as refused:
        load_sweep(tmp_path)
    assert str(refused.value) == f"{tmp_path} is not a sweep directory: it has no results.csv and conditions.csv"


def test_a_search_task_s_targets_are_counted_by_the_step_they_were_found_at():
    summary = {
        "discovery_curve": [[1, 2], [2, 3], [3, 5]],
        "search": {"steps_to_target": {"sofa": 2, "lamp": None, "tv": 3}},
    }
    rows = _run_steps("run", "all runs", summary)
    assert [(step, found, targets) for _, _, step, found, _, targets, _, _ in rows] == [(1, 2, 0), (2, 3, 1), (3, 5, 2)]
    # A summary without the curves:
    assert {(cells, messages, distance) for *_, cells, _, messages, distance in rows} == {(None, None, None)}


def test_each_step_has_the_distance_the_team_had_moved_when_it_began():
    summary = {
        "discovery_curve": [[1, 0], [2, 1], [3, 1]],
        "team": {"cells_curve": [[1, 4], [2, 7], [3, 9]], "cells_by_distance": [[0, 4], [2, 7], [3, 9]]},
    }
    rows = _run_steps("run", "all runs", summary)
    assert [(step, cells, distance) for _, _, step, _, cells, _, _, distance in rows] == [
        (1, 4, 0),
        (2, 7, 2),
        (3, 9, 3),
    ]


def test_without_pyarrow_the_sweep_writes_no_parquet_and_load_sweep_names_the_extra(tmp_path, monkeypatch):
    from explorer.sweep.tidy import load_sweep, write_tables

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # an import of it raises ImportError, as where it is missing
    assert write_tables(tmp_path) == (
        "runs.parquet and steps.parquet not written: pandas and pyarrow are not installed (pip install -e '.[data]')"
    )
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ConfigError, match=r"^load_sweep needs pandas and pyarrow, the `data` extra: pip install"):
        load_sweep(tmp_path)
