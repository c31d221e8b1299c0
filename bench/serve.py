"""What watching a run live costs the agents: `python bench/serve.py` prints the figures and writes
bench/serve.json.

16 offline agents explore a generated 100x100 office for STEPS steps, each run a real `python main.py`:
without `--serve`, and with `--serve 0` and a page reading its event stream all along (in this script,
as a browser's EventSource would), alternately, REPEATS times each. The figures: each run's exploration
wall time (the summary's), the median ratio of the watched runs' to the unwatched ones' (measured in this
one script, so that it survives a busy machine better than the seconds do), the page's updates, and the
CPU time one update of the page's state takes for this run (its trace folded in, the state made, median
of 5).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402
from explorer.report.live import LiveTeam  # noqa: E402
from harness.live_run import MAIN, LiveRun  # noqa: E402
from perception.families.generate import open_world  # noqa: E402

AGENTS = 16
STEPS = 40
WORLD = "gen:office?size=100x100"
REPEATS = 2
TEAM = ("--agents", str(AGENTS), "--steps", str(STEPS), "--world", WORLD, "-q")


def unwatched(run_dir: Path) -> float:
    subprocess.run([sys.executable, MAIN, *TEAM, "--run-dir", str(run_dir)], check=True, capture_output=True)
    return json.loads((run_dir / "summary.json").read_text())["wall_seconds"]


def watched(run_dir: Path) -> tuple[float, int]:
    """The wall time, and the updates the page read."""
    updates = [0]
    with LiveRun(*TEAM, "--run-dir", str(run_dir)) as run:
        reader = threading.Thread(target=_read_events, args=(run.url, updates), daemon=True)
        reader.start()
        run.wait_for("until Ctrl-C", seconds=1800)
        reader.join(60)
    return json.loads((run_dir / "summary.json").read_text())["wall_seconds"], updates[0]


def _read_events(url: str, updates: list[int]) -> None:
    with urllib.request.urlopen(url + "events", timeout=1800) as stream:
        for raw in stream:
            if raw.startswith(b"data: {"):
                updates[0] += 1
                if b'"ended": {' in raw:
                    return


def update_seconds(run_dir: Path) -> float:
    """One update of the page's state at the run's end: median of 5."""
    config = json.loads((run_dir / "config.json").read_text())
    team = LiveTeam(config["agent_ids"], open_world(config["world"], config.get("world_seed"), None))
    for line in (run_dir / "trace.jsonl").read_text().splitlines():
        team.add(json.loads(line))
    times = []
    for _ in range(5):
        began = time.thread_time()  # its CPU time: what a busy machine changes least
        team.snapshot()
        times.append(time.thread_time() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "serve.json")
    args = parser.parse_args()
    plain, seen, updates = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(REPEATS):
            plain.append(unwatched(Path(folder) / f"plain-{repeat}"))
            wall, read = watched(Path(folder) / f"served-{repeat}")
            seen.append(wall)
            updates.append(read)
        update = update_seconds(Path(folder) / "served-0")
    ratio = statistics.median(s / p for s, p in zip(seen, plain))
    figures = {
        "command": command_line("serve.py"),
        "agents": AGENTS,
        "steps": STEPS,
        "world": WORLD,
        "wall_seconds_unwatched": plain,
        "wall_seconds_watched": seen,
        "watched_over_unwatched": round(ratio, 3),
        "page_updates": updates,
        "update_seconds": round(update, 3),
    }
    print(json.dumps(figures, indent=1))
    write_figures(args.out, figures)


if __name__ == "__main__":
    main()
