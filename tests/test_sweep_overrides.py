"""A sweep overridden on the command line: `--set KEY=VALUE` for a key of the file's `fixed:`, `--out DIR` for its
`out`, `--experiment NAME` for its MLflow experiment; each checked as the file's value is, shown by a dry run,
recorded in what the sweep writes, and refused over runs it would change, as an edited file is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from explorer.sweep.overrides import Overrides
from explorer.sweep.sweep_file import load_sweep
from harness.sweeps import read_results, sweep, write_sweep
from tests.support.in_process import sweep_here
from tests.support.optional import needs

# Office gives no start poses: the seeds place the agent.
SWEEP = """\
out: {out}
grid:
  seed: [1, 2]
fixed:
  world: office
  agents: 1
  steps: 3
"""
NAMED = """\
out: {out}
conditions:
  - {{name: plain}}
  - {{name: random, model: random}}
grid: {{seed: [1]}}
fixed: {{world: office, agents: 1, steps: 3, comm: true}}
"""


def recorded(run_dir: Path) -> dict:
    return json.loads((run_dir / "config.json").read_text(encoding="utf-8"))


def one_line_error(result) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stdout + result.stderr, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def overridden(tmp_path_factory):
    """The sweep of SWEEP run with --set steps=5 and --out elsewhere: its directory, the out its file names, the
    sweep file and the result."""
    directory = tmp_path_factory.mktemp("overridden")
    in_file, elsewhere = directory / "in-file", directory / "elsewhere"
    sweep_file = write_sweep(directory, SWEEP.format(out=in_file))
    result = sweep_here(sweep_file, "--set", "steps=5", "--out", str(elsewhere), "--parallel", "2")
    return elsewhere, in_file, sweep_file, result


def test_set_changes_every_run_and_out_puts_the_sweep_elsewhere(overridden):
    elsewhere, in_file, _, result = overridden
    assert result.returncode == 0, result.stderr
    assert not in_file.exists()
    assert [row["run_dir"] for row in read_results(elsewhere)] == ["seed=1", "seed=2"]
    for row in read_results(elsewhere):
        assert row["steps"] == "5" and row["status"] == "completed"
        assert recorded(elsewhere / row["run_dir"])["steps"] == 5
        summary = json.loads((elsewhere / row["run_dir"] / "summary.json").read_text(encoding="utf-8"))
        assert summary["steps"] == {"Agent1": 5}


def test_the_sweep_says_and_records_what_the_command_line_changed(overridden):
    elsewhere, in_file, _, result = overridden
    said = f"Overridden on the command line: steps: 5 (the file's: 3); out: {elsewhere} (the file's: {in_file})."
    assert said in result.stdout.splitlines()
    page = (elsewhere / "sweep.html").read_text(encoding="utf-8")
    assert "# Overridden on the command line (--set, --out):" in page
    assert "#   steps: 5 (the file&#39;s: 3)" in page


def test_a_resumed_sweep_refuses_an_override_that_changes_its_runs(overridden):
    elsewhere, _, sweep_file, _ = overridden
    changed = sweep_here(sweep_file, "--set", "steps=4", "--out", str(elsewhere))
    assert one_line_error(changed) == (
        f"main.py: error: {sweep_file}: {elsewhere / 'seed=1'} ran with steps 5, not 4: give the sweep another "
        "`out`, or remove that run to run it again"
    )
    dropped = sweep_here(sweep_file, "--out", str(elsewhere))  # the file's own steps: 3
    assert "ran with steps 5, not 3" in one_line_error(dropped)
    same = sweep_here(sweep_file, "--set", "steps=5", "--out", str(elsewhere))
    assert same.returncode == 0, same.stderr
    assert "2 complete already (skipped), 0 to run." in same.stdout


def test_a_dry_run_shows_the_overrides_and_writes_nothing(tmp_path):
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "in-file"))
    elsewhere = tmp_path / "elsewhere"
    args = ("--set", "find=[printer, plant]", "--set", "steps=80", "--out", str(elsewhere), "--dry-run")
    result = sweep_here(sweep_file, *args)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == (
        "Overridden on the command line: find: printer,plant (not in the file); steps: 80 (the file's: 3); "
        f"out: {elsewhere} (the file's: {tmp_path / 'in-file'})."
    )
    assert f"  {elsewhere / 'seed=1'}: to run" in lines
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sweep.yaml"]


def test_a_set_value_is_read_as_the_file_s_value_and_replaces_the_same_option(tmp_path):
    sweep_file = write_sweep(tmp_path, NAMED.format(out=tmp_path / "out"))
    loaded = load_sweep(sweep_file, Overrides(("find=[printer, plant]", "no_comm=true", "steps=7")))
    run = loaded.runs[0]
    assert (run.settings["find"], run.settings["comm"], run.settings["steps"]) == (["printer", "plant"], "none", 7)
    # `no-comm` sets what the file's `comm` set, so it takes its place; `steps` keeps its own.
    assert list(run.values) == ["condition", "seed", "world", "agents", "steps", "find", "no-comm"]
    assert loaded.overridden == (
        "find: printer,plant (not in the file)",
        "no-comm: true (the file's comm: true)",
        "steps: 7 (the file's: 3)",
    )


def test_a_set_url_s_credentials_are_shown_nowhere(tmp_path):
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out"))
    loaded = load_sweep(sweep_file, Overrides(("api-base=http://zq-user:pw-Secret-91@127.0.0.1:9/v1",)))
    assert "--api-base=http://zq-user:pw-Secret-91@127.0.0.1:9/v1" in loaded.runs[0].arguments
    shown = [loaded.text, *loaded.overridden, *loaded.runs[0].values.values()]
    assert not any("pw-Secret-91" in text for text in shown)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--set", "stepz=5"], "--set: unknown run option `stepz` (the options of `python main.py --help`)"),
        (
            ["--set", "steps"],
            "--set 'steps': give KEY=VALUE, KEY an option of the sweep file's `fixed:`, e.g. steps=80",
        ),
        (["--set", "=5"], "--set '=5': give KEY=VALUE, KEY an option of the sweep file's `fixed:`, e.g. steps=80"),
        (
            ["--set", "steps=[5"],
            "--set 'steps=[5': invalid YAML at line 1: expected ',' or ']', but got '<stream end>'",
        ),
        (
            ["--set", "seed=3"],
            "--set: `seed` is set by the grid's axis `seed`, not a fixed key: change it in the sweep file",
        ),
        (["--set", "steps=1", "--set", "steps=2"], "--set: `steps` is given twice"),
        (
            ["--set", "run-dir=x"],
            "--set: `run-dir` cannot be set per run: each run's directory is in the sweep's: set `out`",
        ),
        (["--set", "steps=abc"], "{file}: run seed=1: argument --steps: invalid int value: 'abc'"),
        (["--out", "{file}"], "--out {file}: that is a file; name the sweep's directory"),
        (
            ["--experiment", "study"],
            "--experiment names the MLflow experiment of a tracked sweep: give --track mlflow too "
            "(or `track: mlflow` in the sweep file)",
        ),
    ],
)
def test_a_bad_override_is_one_line_and_exit_2_before_anything_runs(tmp_path, capsys, args, error):
    from explorer.cli.main import main

    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out"))
    argv = [arg.format(file=sweep_file) for arg in args]
    assert main(["--sweep", str(sweep_file), *argv]) == 2
    assert capsys.readouterr().err == f"main.py: error: {error.format(file=sweep_file)}\n"
    assert not (tmp_path / "out").exists()


def test_a_named_condition_s_option_is_no_fixed_key(tmp_path, capsys):
    from explorer.cli.main import main

    sweep_file = write_sweep(tmp_path, NAMED.format(out=tmp_path / "out"))
    assert main(["--sweep", str(sweep_file), "--set", "model=offline"]) == 2
    assert capsys.readouterr().err == (
        "main.py: error: --set: `model` is set by the condition 'random', not a fixed key: change it in the sweep file\n"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--set", "steps=5"], "--set goes with --sweep FILE: it sets a fixed option of every run of the sweep"),
        (["--experiment", "x"], "--experiment goes with --sweep FILE: it names the MLflow experiment a sweep's runs are logged to"),
        (["--out", "x"], "--out goes with --export-sft RUN_DIR... (the JSONL file to write) or --sweep FILE (the sweep's directory)"),
    ],
)  # fmt: skip
def test_the_sweep_s_overrides_without_a_sweep_are_one_line_and_exit_2(capsys, args, error):
    from explorer.cli.main import main

    assert main(args) == 2
    assert capsys.readouterr().err == f"main.py: error: {error}\n"


def test_the_mlflow_experiment_is_named_after_out_or_by_experiment(tmp_path):
    needs("mlflow", "track")
    needs("sqlalchemy", "track")
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"  # before the import: nothing reaches for the network
    from mlflow import MlflowClient

    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": store}
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "in-file").replace("[1, 2]", "[1]"))
    for args in (["--experiment", "my-study"], ["--out", str(tmp_path / "sweep-80"), "--set", "steps=4"]):
        result = sweep(sweep_file, "--track", "mlflow", *args, cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=store)
    for name, out, steps in (("my-study", "in-file", "3"), ("sweep-80", "sweep-80", "4")):
        experiment = client.get_experiment_by_name(name)
        assert experiment is not None, name
        runs = client.search_runs([experiment.experiment_id])
        children = [run for run in runs if "mlflow.parentRunId" in run.data.tags]
        assert len(runs) == 2 and [child.data.params["steps"] for child in children] == [steps]
        parent = next(run for run in runs if run not in children)
        assert parent.info.run_name == out
    assert client.get_experiment_by_name("in-file") is None  # --experiment named it instead
