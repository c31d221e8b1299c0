"""A run on a disk that fills up: one line, every complete trace line kept, no partial files left."""

import json
import subprocess
import sys

import pytest

from tests.support.mounts import tmpfs
from tests.support.paths import ROOT


@pytest.fixture
def small_disk(tmp_path):
    """A real 256 KB file system."""
    with tmpfs(tmp_path / "small_disk", "size=256k") as mount:
        yield mount


def test_a_full_disk_stops_the_run_with_one_line_and_keeps_every_whole_trace_line(small_disk):
    run_dir = small_disk / "run"
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--agents", "2", "--steps", "500", "--run-dir", str(run_dir), "-q"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("main.py: error: ") and "No space left on device" in errors[0]
    lines = (run_dir / "trace.jsonl").read_text().splitlines()
    assert len(lines) > 4
    assert all(json.loads(line)["agent_id"] for line in lines)  # every line whole
    leftovers = [p.name for p in run_dir.rglob("*") if p.name.endswith((".partial", ".tmp"))]
    assert leftovers == []
    # A memory whose save did not fit left nothing of itself behind.
    for memory in (run_dir / "memory").glob("*"):
        assert (memory / "meta.json").exists() or not list(memory.iterdir())
