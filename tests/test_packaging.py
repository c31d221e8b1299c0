"""The package as pip installs it: everything the program reads at run time is inside the wheel."""

import shutil
import subprocess
import sys
import zipfile

from tests.support.paths import ROOT


def test_the_wheel_holds_every_package_the_shipped_worlds_key_maps_and_prompts(tmp_path):
    # Built from a copy: setuptools writes build/ beside the sources.
    copy = tmp_path / "src"
    shutil.copytree(
        ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "runs", "build", "*.egg-info", "__pycache__")
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(copy),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    source = {
        path.relative_to(ROOT).as_posix()
        for package in ("explorer", "nodes", "perception", "memory", "prompts")
        for path in (ROOT / package).rglob("*")
        if path.suffix in (".py", ".yaml", ".md", ".j2") and "__pycache__" not in path.parts
    }
    assert {
        "perception/worlds/apartment.yaml",
        "perception/keymaps/unity_fps.yaml",
        "prompts/decision.md",
        "explorer/report/templates/run.html.j2",
    } <= source
    assert source - names == set()
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "multi-agent-explorer = explorer.cli.main:entry_point" in zipfile.ZipFile(wheel).read(entry_points).decode()
