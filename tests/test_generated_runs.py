"""Runs on generated worlds: --world gen:FAMILY --world-seed N, and --export-world."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.config.run_config import RunConfig
from explorer.records.errors import ConfigError
from explorer.run.runner import ExplorationRun
from perception.families.generate import open_world
from perception.world import load_world
from tests.support.paths import ROOT


def main_py(*args):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True, timeout=120)


def test_a_run_on_a_generated_world_says_which_it_was(tmp_path, embedder):
    config = RunConfig.of(
        world=Path("gen:house"), world_seed=5, steps=3, run_dir=tmp_path / "run", verbosity=-1
    ).check()
    summary = ExplorationRun(config, embedder=embedder).execute()
    assert summary["status"] == "completed" and summary["world"] == "gen:house?seed=5"
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())
    assert recorded["world"] == "gen:house" and recorded["world_seed"] == 5


def test_an_exported_world_is_the_world_the_run_had(tmp_path):
    path = tmp_path / "corridor.yaml"
    result = main_py("--world", "gen:corridor?size=40x9", "--world-seed", "2", "--export-world", str(path))
    assert result.returncode == 0, result.stderr
    exported = load_world(path)
    made = open_world("gen:corridor?size=40x9", 2)
    assert (exported.size, exported.walls, exported.objects) == (made.size, made.walls, made.objects)
    again = main_py("--world", "gen:corridor?size=40x9", "--world-seed", "2", "--export-world", str(path))
    assert again.returncode == 2 and "is there already" in again.stderr  # never overwritten


def test_an_exported_world_runs_as_the_generated_world_with_its_seed(tmp_path):
    world = ("--world", "gen:corridor?size=40x9", "--world-seed", "2", "--seed", "7", "--agents", "2")
    assert main_py(*world, "--export-world", str(tmp_path / "corridor.yaml")).returncode == 0
    run = ("--steps", "4", "-q")
    assert main_py(*world, *run, "--run-dir", str(tmp_path / "generated")).returncode == 0
    from_file = ("--world", str(tmp_path / "corridor.yaml"), "--seed", "7", "--agents", "2")
    assert main_py(*from_file, *run, "--run-dir", str(tmp_path / "file")).returncode == 0
    assert poses(tmp_path / "generated") == poses(tmp_path / "file")


def poses(run_dir):
    lines = (run_dir / "trace.jsonl").read_text().splitlines()
    return [(step["agent_id"], step["step"], step["pose"]) for step in map(json.loads, lines) if "pose" in step]


def test_an_exported_house_keeps_the_search_task_find_gives(tmp_path):
    path = tmp_path / "house.yaml"
    find = ("--find", "toothbrush,laptop")
    result = main_py("--world", "gen:house", "--world-seed", "3", *find, "--export-world", str(path))
    assert result.returncode == 0, result.stderr
    exported = load_world(path)
    assert exported.targets == ("toothbrush", "laptop")
    made = open_world("gen:house", 3, ("toothbrush", "laptop"))
    assert (exported.walls, exported.objects, exported.rooms) == (made.walls, made.objects, made.rooms)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--world", "gen:castle"], "unknown world family 'castle'"),
        (["--world-seed", "3"], "--world-seed is the seed of a generated world"),
        (["--world", "gen:house", "--world-seed", "-1"], "--world-seed must be at least 0"),
        (["--world", "apartment", "--export-world", "x.yaml"], "--export-world writes a generated world"),
    ],
)
def test_generated_world_mistakes_are_one_line(args, problem):
    result = main_py(*args)
    assert result.returncode == 2
    assert problem in result.stderr and len(result.stderr.strip().splitlines()) == 1


# Issue 50: '' named the current directory as "there already", and a missing directory exited 1.
def test_an_export_world_path_that_names_no_new_file_is_one_line(tmp_path, in_process):
    (tmp_path / "file").write_text("")
    for path, problem in (
        ("", "argument --export-world: give the file to write, such as house.yaml"),
        (" ", "argument --export-world: give the file to write, such as house.yaml"),
        (str(tmp_path), f"--export-world {tmp_path}: that is a directory; name a new file"),
        (
            f"{tmp_path}/no/such/w.yaml",
            f"--export-world {tmp_path}/no/such/w.yaml: {tmp_path}/no/such is not a directory",
        ),
        (f"{tmp_path}/file/w.yaml", f"--export-world {tmp_path}/file/w.yaml: {tmp_path}/file is not a directory"),
    ):
        result = in_process.run("--world", "gen:house", "--export-world", path)
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"main.py: error: {problem}\n")
    assert sorted(tmp_path.iterdir()) == [tmp_path / "file"]


def test_the_world_seed_is_checked_however_the_config_is_made():
    with pytest.raises(ConfigError, match="the name gives seed 4 and the world seed is 5"):
        RunConfig.of(world=Path("gen:maze?seed=4"), world_seed=5).check()
