"""Running `main.py --sweep` as a user does, and reading what it leaves."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path

from harness import MAIN


def sweep(sweep_file: Path, *args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, MAIN, "--sweep", str(sweep_file), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def write_sweep(directory: Path, text: str, name: str = "sweep.yaml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def read_results(sweep_dir: Path) -> list[dict[str, str]]:
    with open(sweep_dir / "results.csv", newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def processes_using(path: Path) -> list[int]:
    """The pids of the other processes whose command line names `path`, or that hold a file under it open: a
    sweep's runs, forked from one process, hold their run's lock and trace (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int(entry.name) != os.getpid() and _uses(entry, str(path)):
                found.append(int(entry.name))
        except OSError:  # it ended while we looked, or is not ours to look into
            continue
    return found


def _uses(process: Path, path: str) -> bool:
    if path in (process / "cmdline").read_bytes().decode(errors="replace"):
        return True
    opened = (os.readlink(link) for link in (process / "fd").iterdir())
    return any(target == path or target.startswith(path + os.sep) for target in opened)


def stop_sweep(process: subprocess.Popen, out: Path) -> list[dict[str, str]]:
    """Ctrl-C to a sweep started in a session of its own: it must stop cleanly (exit 130, no traceback, the
    resume hint, no run left running); its results.csv rows."""
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stdout + stderr
    assert "Run the same command again" in stdout
    assert processes_using(out) == []  # no run is left running
    return read_results(out)
