"""Sweeps on Ray (`--executor ray`), on a real cluster of two nodes on this machine: a head and a worker node,
one CPU each (ray.cluster_utils.Cluster), which the sweep joins through RAY_ADDRESS as it would a real one. The
head is started once for the module; a test that kills the worker node leaves the next one a new worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.cli.main import main
from harness.sweeps import MAIN, read_results, stop_sweep, sweep, write_sweep
from tests.support.in_process import sweep_here
from tests.support.optional import needs

SWEEP = """\
out: {out}
grid:
  seed: [1, 2, 3, 4, 5, 6]
fixed:
  agents: 2
  steps: {steps}
  random-starts: true
"""
TIMINGS = ("wall_seconds",)  # the one column that differs between two sweeps of the same runs
NODE_UP_SECONDS = 30
STEPS_UNDER_WAY = 100  # a run of as many steps is still under way when its node is killed (about 3 s)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    """A Ray cluster on this machine for the module's tests: a head node of one CPU, started once."""
    needs("ray", "cluster")
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture
def two_nodes(ray_cluster) -> tuple[object, dict[str, str]]:
    """The cluster with one worker node of one CPU beside its head (a new one where a test killed the last):
    the cluster, and the environment that names it."""
    if not ray_cluster.worker_nodes:
        ray_cluster.add_node(num_cpus=1)
    return ray_cluster, {**os.environ, "RAY_ADDRESS": ray_cluster.address, "RAY_USAGE_STATS_ENABLED": "0"}


def attempts(out: Path) -> list[dict[str, str]]:
    """Each attempt of a run on the cluster: the run's name and its node's id."""
    path = out / ".sweep" / "ray-attempts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def without_timings(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{key: value for key, value in row.items() if key not in TIMINGS} for row in rows]


def test_a_ray_sweep_runs_on_both_nodes_with_the_local_sweep_s_results(tmp_path, two_nodes):
    cluster, environment = two_nodes
    local_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "local", steps=5), "local.yaml")
    ray_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "ray", steps=5) + "executor: ray\n", "ray.yaml")
    result = sweep(ray_file, "--parallel", "2", env=environment)
    nodes = {cluster.head_node.node_id, *(node.node_id for node in cluster.worker_nodes)}
    assert result.returncode == 0, result.stderr
    assert "0 complete already (skipped), 6 to run, 2 at once" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    local = sweep_here(local_file, "--parallel", "2")
    assert local.returncode == 0, local.stderr
    rows = read_results(tmp_path / "ray")
    assert {row["status"] for row in rows} == {"completed"}
    # The runs are deterministic: run for run, the same figures wherever they ran.
    assert without_timings(rows) == without_timings(read_results(tmp_path / "local"))
    ran = attempts(tmp_path / "ray")
    assert sorted(attempt["run"] for attempt in ran) == sorted(row["run_dir"] for row in rows)  # once each
    assert {attempt["node"] for attempt in ran} == nodes  # both nodes took runs
    # The same command again resumes: every run is complete, none runs again.
    again = sweep(ray_file, "--parallel", "2")  # no Ray is needed for it
    assert "6 complete already (skipped), 0 to run." in again.stdout, again.stderr


def test_the_runs_of_a_worker_node_that_dies_are_run_again(tmp_path, two_nodes):
    cluster, environment = two_nodes
    four_seeds = SWEEP.replace("[1, 2, 3, 4, 5, 6]", "[1, 2, 3, 4]")  # enough for a run on each node and one after
    sweep_file = write_sweep(tmp_path, four_seeds.format(out=tmp_path / "out", steps=STEPS_UNDER_WAY))
    (worker,) = cluster.worker_nodes
    head, killed_node = cluster.head_node.node_id, worker.node_id
    process = subprocess.Popen(
        [sys.executable, MAIN, "--sweep", str(sweep_file), "--executor", "ray", "--parallel", "2"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + NODE_UP_SECONDS
    while not any(attempt["node"] == killed_node for attempt in attempts(tmp_path / "out")):
        assert time.monotonic() < deadline and process.poll() is None, "no run went to the worker node"
        time.sleep(0.1)
    cluster.remove_node(worker, allow_graceful=False)  # killed with a run under way
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    rows = read_results(tmp_path / "out")
    assert {row["status"] for row in rows} == {"completed"}
    ran = attempts(tmp_path / "out")
    killed = {attempt["run"] for attempt in ran if attempt["node"] == killed_node}
    assert killed
    for name in killed:  # run again, on the node that was left, from a clean directory
        assert [attempt["node"] for attempt in ran if attempt["run"] == name][-1] == head
        assert json.loads((tmp_path / "out" / name / "summary.json").read_text())["steps"]["Agent1"] == STEPS_UNDER_WAY
    assert "Traceback" not in stdout + stderr


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--executor", "ray"], "pip install -e '.[cluster]'"),
        ([], "pip install -e '.[cluster]'"),  # the file's `executor: ray`
        (["--executor", "slurm"], "no executor is named 'slurm' (they are local, ray)"),
    ],
)
def test_an_executor_that_cannot_run_is_one_line_and_exit_2_before_anything_runs(
    tmp_path, monkeypatch, capsys, argv, words
):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed: `import ray` fails
    monkeypatch.delitem(sys.modules, "explorer.sweep.ray_executor", raising=False)
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out", steps=5) + "executor: ray\n")
    assert main(["--sweep", str(sweep_file), *argv]) == 2
    error = capsys.readouterr().err
    assert words in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("executor: slurm\n", "executor: no executor is named 'slurm'"),
        ("grid: {seed: [1], executor: [ray]}\n", "`executor` cannot be set per run"),
    ],
)
def test_a_sweep_file_s_unknown_executor_is_one_line_and_exit_2(tmp_path, capsys, text, words):
    sweep_file = write_sweep(tmp_path, f"out: {tmp_path / 'out'}\nfixed: {{agents: 2}}\n" + text)
    assert main(["--sweep", str(sweep_file)]) == 2
    error = capsys.readouterr().err
    assert words in error and len(error.strip().splitlines()) == 1


def test_ctrl_c_cancels_the_tasks_and_each_run_stops_cleanly(tmp_path):
    needs("ray", "cluster")
    out = tmp_path / "out"
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=out, steps=400) + "executor: ray\n")
    environment = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}  # a Ray of its own
    # As from a terminal: the sweep leads its own process group, and Ctrl-C goes to the whole group.
    process = subprocess.Popen(
        [sys.executable, MAIN, "--sweep", str(sweep_file), "--parallel", "2"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a harness may have it ignored
    )
    deadline = time.monotonic() + NODE_UP_SECONDS
    while not any(len(trace.read_text().splitlines()) >= 4 for trace in out.glob("seed=*/trace.jsonl")):
        assert time.monotonic() < deadline and process.poll() is None, "no run got under way"
        time.sleep(0.1)
    statuses = [row["status"] for row in stop_sweep(process, out)]
    assert statuses.count("interrupted") == 2 and statuses.count("not run") == 4  # both under way, stopped cleanly


@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}", "no-port-here"])
def test_a_ray_address_nothing_answers_at_is_one_line_and_exit_2_with_no_run_claimed(tmp_path, address):
    needs("ray", "cluster")
    import socket

    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sweep_file = write_sweep(tmp_path, SWEEP.format(out=tmp_path / "out", steps=5) + "executor: ray\n")
    environment = {**os.environ, "RAY_ADDRESS": address.format(port=port)}
    result = sweep(sweep_file, "--parallel", "2", env=environment, timeout=120)  # Ray's own loop: minutes
    assert result.returncode == 2, result.stdout + result.stderr
    assert "RAY_ADDRESS" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not [path for path in (tmp_path / "out").iterdir() if path.is_dir() and not path.name.startswith(".")]
