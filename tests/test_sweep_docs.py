"""The sweep examples of the README's "Sweeps" section and docs/sweeps.md, run as they are written: every
sweep file they show is checked by a dry run, the README's is run with MLflow tracking and read with the
README's pandas example, and the replicates example makes the conditions it says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.sweeps import sweep, write_sweep
from tests.support.in_process import sweep_here
from tests.support.optional import needs
from tests.support.paths import ROOT
from tests.test_examples import run_example

DOCS = (ROOT / "README.md", ROOT / "docs" / "sweeps.md")


def sweep_files(path: Path) -> list[str]:
    """The YAML blocks of `path` that are whole sweep files (a grid or conditions to run)."""
    blocks = re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    return [block for block in blocks if re.search(r"^(grid|conditions):", block, re.M)]


def example(path: Path, marker: str) -> str:
    """The one sweep file of `path` whose text holds `marker`."""
    (found,) = [block for block in sweep_files(path) if marker in block]
    return found


@pytest.mark.parametrize(("path", "index"), [(path, i) for path in DOCS for i in range(len(sweep_files(path)))])
def test_every_sweep_file_the_docs_show_passes_a_dry_run(tmp_path, path, index):
    result = sweep_here(write_sweep(tmp_path, sweep_files(path)[index]), "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Dry run of a sweep of ") and not list(tmp_path.glob("runs"))


def test_the_replicates_example_makes_one_condition_of_fifteen_runs_per_comm_setting(tmp_path):
    result = sweep_here(write_sweep(tmp_path, example(DOCS[1], "the replicates example")), "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    conditions = [line for line in result.stdout.splitlines() if not line.startswith(("  ", "Dry run"))]
    assert conditions[:2] == ["comm=true: 15 runs", "comm=false: 15 runs"]
    assert conditions[2].startswith("Analysis plan: 2 conditions × 15 runs (5 layouts × 3 seeds); baseline: comm=true;")


def test_the_readmes_sweep_runs_tracked_and_reads_as_tables(tmp_path):
    needs("mlflow", "track")
    needs("pandas", "data")
    comm = write_sweep(tmp_path, example(DOCS[0], "out: runs/sweep-comm"), "comm.yaml")
    result = sweep(comm, "--parallel", "2", "--track", "mlflow", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "┃ condition " in line)
    assert [cell.strip() for cell in header.strip("┃ ").split("┃")][1:3] == ["finished", "steps to 90%"]
    out = tmp_path / "runs" / "sweep-comm"
    for written in ("results.csv", "conditions.csv", "sweep.html", "runs.parquet", "steps.parquet", "mlflow.db"):
        assert (out / written).is_file(), written
    tables = run_example("examples/sweep_tables.py", tmp_path, "runs/sweep-comm")
    assert tables.returncode == 0, tables.stderr
    assert tables.stdout.splitlines()[0].split()[:3] == ["comm", "world", "objects_found"]
    logged = subprocess.run(
        [sys.executable, "-c", LOGGED, f"sqlite:///{out / 'mlflow.db'}"], capture_output=True, text=True, check=True
    )
    assert logged.stdout.split() == ["13"]  # the sweep and its 12 runs


LOGGED = """\
import sys, mlflow
mlflow.set_tracking_uri(sys.argv[1])
print(len(mlflow.search_runs(search_all_experiments=True)))
"""


def override_example(path: Path) -> tuple[list[str], list[str]]:
    """The arguments after `--sweep comm.yaml` of the one command of `path` that overrides the sweep file, and
    the lines the page shows it print (none where it shows none)."""
    text = path.read_text(encoding="utf-8")
    (command,) = re.findall(r"^python main\.py --sweep comm\.yaml (.*--set .*)$", text, re.M)
    shown = re.search(re.escape(command) + r"\n```\n\n```text\n(.*?)```", text, re.S)
    return shlex.split(command), shown.group(1).splitlines() if shown else []


@pytest.mark.parametrize("path", DOCS)
def test_the_override_example_changes_the_readmes_sweep_as_it_says(tmp_path, path):
    comm = write_sweep(tmp_path, example(DOCS[0], "out: runs/sweep-comm"), "comm.yaml")
    args, shown = override_example(path)
    result = sweep_here(comm, *args, *([] if "--dry-run" in args else ["--dry-run"]), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    assert printed[1].startswith("Overridden on the command line: steps: 80 (the file's: 30); ")
    assert printed[1].endswith("out: runs/sweep-80 (the file's: runs/sweep-comm).")
    assert printed[0].startswith("Dry run of a sweep of 12 runs in runs/sweep-80: ")
    assert all(line in printed for line in shown if line != "  ...")
