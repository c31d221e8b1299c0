"""--track mlflow: a sweep's runs logged to a real local MLflow store (SQLite, no server), each once, with
nothing secret in it (issue 49, part 6)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from harness.sweeps import read_results, sweep, write_sweep
from tests.support.optional import needs

# Office gives no start poses: the seeds place the agent. The URL's password must reach MLflow nowhere.
SWEEP = """\
out: {out}
grid:
  seed: {seeds}
fixed:
  world: office
  agents: 1
  steps: 3
  api-base: http://zq-user:pw-Secret-91@127.0.0.1:9/v1
{more}"""
API_KEY = "sk-fake-Secret-4f7c2a"
SECRETS = ("zq-user", "pw-Secret-91", API_KEY)


def store_client(uri: str):
    """A client of the store at `uri`, as a user would read it."""
    needs("mlflow", "track")
    needs("sqlalchemy", "track")
    os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"  # before the import: nothing reaches for the network
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


def tracked_sweep(directory: Path, seeds: str, *args: str, more: str = "", store: str | None = None):
    """The sweep of SWEEP in `directory`, run from there with a fake API key (and MLFLOW_TRACKING_URI=`store`)."""
    env = {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"}
    env |= {"OPENAI_API_KEY": API_KEY, **({"MLFLOW_TRACKING_URI": store} if store else {})}
    sweep_file = write_sweep(directory, SWEEP.format(out=directory / "out", seeds=seeds, more=more), "tracked.yaml")
    result = sweep(sweep_file, *args, cwd=directory, env=env)  # from `directory`: MLflow's ./mlruns is there
    assert result.returncode == 0, result.stderr
    return result


def runs_of(client) -> tuple[object, dict[str, object]]:
    """The experiment's parent run, and its children by run directory."""
    experiment = client.get_experiment_by_name("out")  # named after the sweep's `out`
    runs = client.search_runs([experiment.experiment_id])
    parents = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    assert len(parents) == 1
    children = {run.data.tags["explorer.run_dir"]: run for run in runs if run not in parents}
    assert all(run.data.tags["mlflow.parentRunId"] == parents[0].info.run_id for run in children.values())
    return parents[0], children


@pytest.fixture(scope="module")
def tracked(tmp_path_factory):
    """Two runs tracked in a SQLite store that MLFLOW_TRACKING_URI names: the directory, the store's URI and
    the sweep's result."""
    directory = tmp_path_factory.mktemp("tracked")
    store = f"sqlite:///{directory / 'store' / 'mlflow.db'}"
    (directory / "store").mkdir()
    store_client(store)  # skips (fails in CI) before anything runs, where MLflow is not installed
    return directory, store, tracked_sweep(directory, "[1, 2]", "--track", "mlflow", store=store)


def test_each_run_is_a_child_of_the_sweep_with_its_options_figures_curve_and_files(tracked):
    directory, store, result = tracked
    client = store_client(store)
    parent, children = runs_of(client)
    assert f"MLflow: the sweep is run {parent.info.run_id} of the experiment 'out'" in result.stdout
    assert parent.info.status == "FINISHED" and sorted(children) == ["seed=1", "seed=2"]
    for name, child in children.items():
        summary = json.loads((directory / "out" / name / "summary.json").read_text())
        assert child.info.status == "FINISHED"
        assert (child.data.params["seed"], child.data.params["agents"]) == (name.removeprefix("seed="), "1")
        assert child.data.params["api_base"] == "http://***@127.0.0.1:9/v1"  # as config.json records it
        assert child.data.metrics["objects_found"] == len(summary["objects_discovered"])
        assert child.data.metrics["total_objects"] == summary["total_objects"]
        history = client.get_metric_history(child.info.run_id, "discovery_curve")
        assert sorted((m.step, m.value) for m in history) == [
            (step, found) for step, found in summary["discovery_curve"]
        ]
        files = {item.path for item in client.list_artifacts(child.info.run_id)}
        assert files == {"summary.json", "report.html"}
        logged = Path(client.download_artifacts(child.info.run_id, "summary.json", str(directory / name)))
        assert json.loads(logged.read_text()) == summary


def test_no_secret_reaches_the_store(tracked):
    directory, store, result = tracked
    client = store_client(store)
    parent, children = runs_of(client)
    texts = [result.stdout, result.stderr]
    for run in [parent, *children.values()]:
        texts.append(json.dumps([run.data.params, run.data.tags, run.data.metrics]))
    folders = ("store", "out/mlartifacts", "mlruns")
    stored = [path for folder in folders for path in (directory / folder).rglob("*") if path.is_file()]
    assert any(path.name == "report.html" for path in stored)  # the artifacts are where MLflow keeps them
    for secret in SECRETS:
        assert not any(secret in text for text in texts), secret
        assert not any(secret.encode() in path.read_bytes() for path in stored), secret


def test_a_database_store_keeps_the_artifacts_in_out_not_where_the_sweep_was_started(tracked):
    directory, store, _ = tracked
    _, children = runs_of(store_client(store))
    artifacts = (directory / "out" / "mlartifacts").resolve()
    for child in children.values():
        assert Path(unquote(urlsplit(child.info.artifact_uri).path)).is_relative_to(artifacts)
    assert len(list(artifacts.rglob("report.html"))) == len(children) == 2
    assert not (directory / "mlruns").exists()  # the sweep ran from `directory`: MLflow's default would be there


def test_a_resumed_sweep_logs_only_the_runs_not_logged_yet(tracked):
    directory, store, _ = tracked
    client = store_client(store)
    parent, children = runs_of(client)
    tracked_sweep(directory, "[1, 2]", "--track", "mlflow", store=store)  # nothing to run, nothing to log
    assert runs_of(client)[1].keys() == children.keys()
    tracked_sweep(directory, "[1, 2, 3]", "--track", "mlflow", store=store)  # one more seed: one more child
    again, now = runs_of(client)
    assert again.info.run_id == parent.info.run_id and again.info.status == "FINISHED"
    assert sorted(now) == ["seed=1", "seed=2", "seed=3"]
    assert all(now[name].info.run_id == child.info.run_id for name, child in children.items())


def test_without_a_tracking_uri_the_store_is_in_the_sweep_s_out(tmp_path):
    needs("mlflow", "track")
    result = tracked_sweep(tmp_path, "[1]", more="track: mlflow\n")  # the sweep file's key
    out = tmp_path / "out"
    printed = next(line for line in (result.stdout + result.stderr).splitlines() if line.startswith("MLflow: "))
    address = printed.rpartition(" in ")[2]  # as printed, it pastes: an absolute path after four slashes
    assert address == f"sqlite:///{(out / 'mlflow.db').resolve()}" and address.startswith("sqlite:////")
    _, children = runs_of(store_client(address))
    assert list(children) == ["seed=1"]
    assert (out / "mlartifacts").is_dir() and not (tmp_path / "mlruns").exists()


@pytest.mark.parametrize(
    ("args", "more", "error"),
    [
        (["--track", "wandb"], "", "--track: no tracker is named 'wandb' (there is mlflow)"),
        ([], "track: wandb\n", "{file}: track: no tracker is named 'wandb' (there is mlflow)"),
        ([], "", "--track goes with --sweep FILE: it logs a sweep's runs"),
    ],
)
def test_an_unknown_tracker_is_one_line_and_exit_2(tmp_path, capsys, args, more, error):
    from explorer.cli.main import main

    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out", seeds="[1]", more=more))
    argv = [*args, "--sweep", str(sweep_file)] if args or more else ["--track", "mlflow"]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"main.py: error: {error.format(file=sweep_file)}\n"
    assert not (tmp_path / "out").exists()


def test_track_mlflow_without_mlflow_names_the_extra_before_anything_runs(tmp_path, capsys, monkeypatch):
    import importlib.util

    from explorer.cli.main import main

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else found(name, *a))
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out", seeds="[1]", more=""))
    assert main(["--sweep", str(sweep_file), "--track", "mlflow"]) == 2
    assert capsys.readouterr().err == (
        "main.py: error: --track mlflow: mlflow is not installed: pip install 'multi-agent-explorer[track]'\n"
    )
    assert not (tmp_path / "out").exists()


def closed_port() -> int:
    """A localhost port nothing listens on: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_server_is_one_line_within_seconds_before_any_run(tmp_path):
    needs("mlflow", "track")
    store = f"http://zq-user:pw-Secret-91@127.0.0.1:{closed_port()}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("MLFLOW_")}
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out", seeds="[1, 2]", more=""), "tracked.yaml")
    started = time.monotonic()
    # MLflow's own retries would take about 260 s: the time limit fails the test long before.
    result = sweep(sweep_file, "--track", "mlflow", cwd=tmp_path, env=env | {"MLFLOW_TRACKING_URI": store}, timeout=60)
    elapsed = time.monotonic() - started
    shown = store.replace("zq-user:pw-Secret-91", "***")
    assert result.returncode == 2, result.stderr
    assert elapsed < 20, elapsed  # Python, MLflow's import and 3 tries refused, about 3 s of them
    bounds = "at most 2 retries, 1 s apart and doubling, 5 s a try"
    assert f"MLflow: checking the store {shown} ({bounds}: " in result.stdout
    [line] = result.stderr.splitlines()
    assert line.startswith(f"main.py: error: --track mlflow: cannot use the store {shown}: ")
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)
    assert not [path for path in (tmp_path / "out").iterdir() if path.name.startswith("seed=")]  # no run claimed


def test_a_store_failing_once_the_runs_go_on_costs_no_results_and_the_same_command_logs_the_rest(tmp_path):
    needs("mlflow", "track")
    out = tmp_path / "out"
    tracked_sweep(tmp_path, "[1]", "--track", "mlflow")  # the store made, its parent and seed=1 logged
    artifacts = out / "mlartifacts"
    shutil.move(artifacts, tmp_path / "kept")
    artifacts.write_text("not a folder")  # the store's artifacts can no longer be written
    result = tracked_sweep(tmp_path, "[1, 2, 3]", "--track", "mlflow")
    # seed=2 and seed=3 run at once: the first to finish is the one the store fails on, the other is not tried
    # (each try holds the sweep up)
    assert any(f"MLflow: the store failed logging seed={seed} (" in result.stdout for seed in (2, 3))
    assert result.stdout.count("MLflow: the store failed") == 1
    assert result.stdout.splitlines()[-1].startswith("MLflow: 2 runs finished but not logged, the store having")
    assert result.stdout.rstrip().endswith("the same command again, once the store is back, logs them")
    assert [row["run_dir"] for row in read_results(out)] == ["seed=1", "seed=2", "seed=3"]
    assert (out / "conditions.csv").is_file() and (out / "sweep.html").is_file()
    client = store_client(f"sqlite:///{out / 'mlflow.db'}")
    logged = [name for name, child in runs_of(client)[1].items() if child.info.status == "FINISHED"]
    assert logged == ["seed=1"]
    artifacts.unlink()
    shutil.move(tmp_path / "kept", artifacts)  # the store back
    again = tracked_sweep(tmp_path, "[1, 2, 3]", "--track", "mlflow")
    assert "not logged" not in again.stdout
    parent, children = runs_of(client)
    assert parent.info.status == "FINISHED" and sorted(children) == ["seed=1", "seed=2", "seed=3"]
    assert all(child.info.status == "FINISHED" for child in children.values())
