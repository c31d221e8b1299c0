"""How long does `explorer.api.load_sweep` take on a 36-run sweep? `python bench/load_sweep.py` writes
bench/load_sweep.json.

The sweep: comm on and off × three worlds × six seeds, 2 agents, 5 steps, the agents placed by the seed (the
study's size, issue 49). Then `load_sweep(out)` in a fresh process, timed inside it after `explorer.api` is
imported: from the parquet files the sweep wrote, and again from the sweep's CSV and JSON files alone (the
parquet files removed). Each reading runs `--repeats` times and the fastest counts: the machine may be shared.
Target: under 2 s. Needs the extra `data` (pip install -e '.[data]').
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from harness.sweeps import read_results, sweep, write_sweep  # noqa: E402

TARGET_SECONDS = 2.0
SWEEP = """\
out: {out}
grid:
  comm: [true, false]
  world: [apartment, office, warehouse]
  seed: [1, 2, 3, 4, 5, 6]
fixed: {{agents: 2, steps: 5, random-starts: true}}
"""
TIMED = """\
import sys, time
started = time.perf_counter()
from explorer.api import load_sweep
imported = time.perf_counter()
data = load_sweep(sys.argv[1])
print(imported - started, time.perf_counter() - imported, len(data.runs), len(data.steps))
"""


def timed_loads(out: Path, repeats: int) -> tuple[list[float], float, int, int]:
    """The seconds of `repeats` loads, the fastest import of explorer.api, and the rows of runs and steps."""
    loads, imports = [], []
    for _ in range(repeats):
        printed = subprocess.run(
            [sys.executable, "-c", TIMED, str(out)], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split()
        imports.append(float(printed[0]))
        loads.append(round(float(printed[1]), 3))
    return loads, round(min(imports), 2), int(printed[2]), int(printed[3])


def figures(directory: Path, repeats: int) -> dict:
    sweep_file = write_sweep(directory, SWEEP.format(out=directory / "out"), "bench36.yaml")
    result = sweep(sweep_file, "--parallel", "2")
    if result.returncode != 0:
        sys.exit(f"load_sweep.py: the sweep failed: {result.stderr.strip()}")
    out = directory / "out"
    runs = len(read_results(out))
    from_parquet, import_seconds, rows, steps = timed_loads(out, repeats)
    for table in ("runs.parquet", "steps.parquet"):
        (out / table).unlink()
    from_files, _, _, _ = timed_loads(out, repeats)
    fastest = max(min(from_parquet), min(from_files))
    return dict(
        command=command_line("load_sweep.py"),
        runs=runs,
        run={"agents": 2, "steps": 5, "random_starts": True},
        rows={"runs": rows, "steps": steps},
        import_seconds=import_seconds,
        from_parquet_seconds=from_parquet,
        from_sweep_files_seconds=from_files,
        target_seconds=TARGET_SECONDS,
        within_target=runs == 36 and fastest < TARGET_SECONDS,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="loads of each kind; the fastest counts")
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "load_sweep.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        write_figures(args.out, figures(Path(directory), args.repeats))
    print(args.out.read_text(), end="")


if __name__ == "__main__":
    main()
