"""How long does a 100-run search sweep's analysis take? `python bench/sweep_analysis.py` writes
bench/sweep_analysis.json.

The sweep: the study's design made bigger, a team of 2 finding a toothbrush and a laptop on generated houses,
4 conditions (plain, no prior, a coordinator, random) × 5 layouts × 5 seeds, `replicates: [seed, world-seed]`,
baseline plain: 100 runs, every interval two-level. Its runs are synthetic, made in a second where the sweep
would take many minutes of both cores: each run's directory gets a summary.json with the fields the analysis
reads (figures drawn from a fixed seed, about a third of the runs failing, so the Kaplan–Meier medians have
censored runs), and the sweep's record of its grid, as the sweep writes them.

Timed in a fresh process, after the imports and after the sweep file is read and checked (both reported): the
analysis is what the sweep does once its runs are done, then `load_sweep`: reading the 100 summaries and
computing every figure and interval (`compare`: bootstraps, Kaplan–Meier medians with SciPy's import,
Newcombe's intervals, the probabilities of improvement), writing results.csv, conditions.csv and the parquet
files (pandas' import with them), and `load_sweep(out)`. Writing sweep.html is timed too, beside it. The
analysis runs `--repeats` times and the fastest counts; the machine may be shared, so the figures file gives
its load average (1 minute) before and after. Target: under 5 s. Needs the extra `data` (pip install -e '.[data]').
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from harness.sweeps import write_sweep  # noqa: E402

TARGET_SECONDS = 5.0
STEPS = 60
SWEEP = """\
out: {out}
conditions:
  - {{name: plain}}
  - {{name: no-prior, no-prior: true}}
  - {{name: coordinator, coordinator: offline}}
  - {{name: random, model: random}}
grid: {{world-seed: [1, 2, 3, 4, 5], seed: [1, 2, 3, 4, 5]}}
fixed: {{world: "gen:house?size=24x14", find: "toothbrush,laptop", agents: 2, steps: {steps}}}
replicates: [seed, world-seed]
baseline: plain
"""
# Per condition, the chance a synthetic run finds both targets and the step it typically does.
OUTCOMES = {"plain": (0.75, 35), "no-prior": (0.6, 42), "coordinator": (0.7, 33), "random": (0.2, 50)}
TOTAL_OBJECTS, TOTAL_CELLS = 18, 300
TIMED = """\
import json, sys, time
from pathlib import Path
started = time.perf_counter()
from explorer.api import load_sweep
from explorer.sweep.compare import compare
from explorer.sweep.metrics import sweep_metrics
from explorer.sweep.page import write_sweep_page
from explorer.sweep.results import CONDITIONS, RESULTS, run_rows, write_conditions, write_results
from explorer.sweep.runner import PAGE, PAGE_METRICS
from explorer.sweep.sweep_file import load_sweep as read_sweep
from explorer.sweep.tidy import write_tables
imported = time.perf_counter()
path = Path(sys.argv[1])
sweep = read_sweep(path)
out = sweep.directory
read = time.perf_counter()
rows = run_rows(out, sweep.runs, {})
metrics = sweep_metrics(rows, sweep.metric)
compared = compare(rows, metrics, sweep.baseline)
figures = time.perf_counter()
write_results(out / RESULTS, sweep.runs, rows)
write_conditions(out / CONDITIONS, compared, metrics)
write_tables(out)
files = time.perf_counter()
write_sweep_page(out / PAGE, f"Sweep {path.name}", sweep.text, metrics, PAGE_METRICS, compared)
page = time.perf_counter()
data = load_sweep(out)
loaded = time.perf_counter()
print(json.dumps({"import": imported - started, "read": read - imported, "figures": figures - read,
    "files": files - figures, "page": page - files, "load_sweep": loaded - page,
    "runs": len(data.runs), "conditions": len(data.conditions), "metrics": len(metrics)}))
"""


def synthetic_summary(condition: str, index: int) -> dict[str, Any]:
    """A finished search run's summary.json, as far as the analysis reads it, drawn from `index`'s seed."""
    draw = random.Random(index)
    chance, typical = OUTCOMES[condition]
    found_at = min(STEPS, max(5, round(draw.gauss(typical, 10)))) if draw.random() < chance else None
    steps_run = found_at or STEPS
    first = draw.randint(1, found_at or STEPS)
    steps_to_target = {"toothbrush": first, "laptop": found_at}
    found = [min(TOTAL_OBJECTS, 1 + step // 4) for step in range(1, steps_run + 1)]
    cells = [min(TOTAL_CELLS, 12 * step) for step in range(1, steps_run + 1)]
    return {
        "status": "completed",
        "steps": {"Agent1": steps_run, "Agent2": steps_run},
        "objects_discovered": [f"object{n}" for n in range(found[-1])],
        "total_objects": TOTAL_OBJECTS,
        "coverage": round(found[-1] / TOTAL_OBJECTS, 4),
        "discovery_curve": [[step, count] for step, count in enumerate(found, start=1)],
        "search": {
            "targets": ["toothbrush", "laptop"],
            "targets_found": [target for target, at in steps_to_target.items() if at is not None],
            "all_found": found_at is not None,
            "steps_to_target": steps_to_target,
            "steps_to_all": found_at,
            "spl": round(draw.uniform(0.3, 0.9), 3) if found_at else 0.0,
        },
        "team": _team(cells, found, draw),
        "llm": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "parse_failures": 0, "errors": 0},
        "messages": {"sent": 2 * steps_run},
        "wall_seconds": round(draw.uniform(2, 4), 3),
    }


def _team(cells: list[int], found: list[int], draw: random.Random) -> dict[str, Any]:
    """The summary's `team` block: the curves and the steps and distance to shares of the objects and cells."""
    walked = [2 * step for step in range(len(cells))]

    def first(curve: list[int], total: int, share: int) -> int | None:
        return next((step for step, value in enumerate(curve, start=1) if value * 100 >= total * share), None)

    to_cells = {f"{share}%": first(cells, TOTAL_CELLS, share) for share in (50, 90, 99)}
    return {
        "cells_seen": cells[-1],
        "total_cells": TOTAL_CELLS,
        "cells_curve": [[step, count] for step, count in enumerate(cells, start=1)],
        "messages_curve": [[step, 2 * step] for step in range(1, len(cells) + 1)],
        "distance": 2 * len(cells),
        "cells_by_distance": [[distance, count] for distance, count in zip(walked, cells)],
        "steps_to_objects": {f"{share}%": first(found, TOTAL_OBJECTS, share) for share in (50, 90, 100)},
        "steps_to_cells": to_cells,
        "distance_to_cells": {share: None if at is None else 2 * (at - 1) for share, at in to_cells.items()},
        "seconds_to_objects": {"90%": None},
        "overlap_ratio": round(draw.uniform(0.1, 0.5), 3),
        "messages_per_agent_step": 1.0,
        "messages_read_per_agent_step": 1.0,
        "message_chars_read_per_agent_step": round(draw.uniform(80, 120), 1),
    }


def make_runs(sweep_file: Path) -> None:
    """The sweep's 100 runs, as a synthetic summary.json in each run's directory."""
    from explorer.sweep.out_dir import SweepOut
    from explorer.sweep.sweep_file import load_sweep

    loaded = load_sweep(sweep_file)
    out = SweepOut(sweep_file, loaded.directory)
    out.state.mkdir(parents=True)
    out.record_grid(loaded.runs)  # each run's condition, as the sweep records it: for load_sweep's tables
    for index, run in enumerate(loaded.runs):
        (loaded.directory / run.name).mkdir(parents=True)
        summary = synthetic_summary(run.condition, index)
        (loaded.directory / run.name / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def timed_analyses(sweep_file: Path, repeats: int) -> list[dict[str, Any]]:
    """The seconds of each part of the analysis, `repeats` times, each in a fresh process."""
    return [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", TIMED, str(sweep_file)], capture_output=True, text=True, check=True, cwd=ROOT
            ).stdout
        )
        for _ in range(repeats)
    ]


def figures(directory: Path, repeats: int) -> dict[str, Any]:
    sweep_file = write_sweep(directory, SWEEP.format(out=directory / "out", steps=STEPS), "bench100.yaml")
    make_runs(sweep_file)
    load_before = os.getloadavg()[0]
    timings = timed_analyses(sweep_file, repeats)
    parts = ("figures", "files", "load_sweep")
    analyses = [round(sum(timing[part] for part in parts), 3) for timing in timings]
    fastest = timings[analyses.index(min(analyses))]
    return dict(
        command=command_line("sweep_analysis.py"),
        runs_made="synthetic summaries (a fixed seed)",
        runs=fastest["runs"],
        conditions=fastest["conditions"],
        metrics=fastest["metrics"],
        import_seconds=round(min(timing["import"] for timing in timings), 2),
        read_and_check_seconds=round(min(timing["read"] for timing in timings), 2),
        analysis_seconds=analyses,
        fastest={part: round(fastest[part], 3) for part in parts},
        page_seconds=round(fastest["page"], 3),
        load_average=[round(load_before, 1), round(os.getloadavg()[0], 1)],
        cores=os.cpu_count(),
        target_seconds=TARGET_SECONDS,
        within_target=fastest["runs"] == 100 and min(analyses) < TARGET_SECONDS,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="analyses timed; the fastest counts")
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "sweep_analysis.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        write_figures(args.out, figures(Path(directory), args.repeats))
    print(args.out.read_text(), end="")


if __name__ == "__main__":
    main()
