"""Behaviour before and after a change of the code's form: `--help`, the one-line refusals, `make_config`'s
records, and a set of runs and a sweep, each reduced to what does not depend on the clock.

    python bench/same_behaviour.py --record bench/same_behaviour.json   # before the change
    python bench/same_behaviour.py --check bench/same_behaviour.json    # after it: exit 1 naming each difference

A run's trace loses its `timings`, its summary every field measured in seconds or milliseconds, its
config.json the run's directory (and its communication is read as one name, as `RunConfig.from_dict` reads it); what is left (every decision, pose, message, count and option) must be the
same, line for line. Each case is kept as a SHA-256 digest, so the file stays small.

A change that alters some fields on purpose (a prompt's layout, say) names them, at both ends:

    python bench/same_behaviour.py --record before.json --leave-out prompt echoed_fields
    python bench/same_behaviour.py --check before.json          # leaves out what the record left out"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.output import command_line, figures_path, write_figures  # noqa: E402

# Runs of every kind the options make: worlds, teams, topologies, schedules, policies, tasks, budgets.
RUNS = {
    "default": ["--steps", "12", "--seed", "5"],
    "office-4-star": [
        "--world",
        "office",
        "--agents",
        "4",
        "--steps",
        "10",
        "--comm",
        "star",
        "--coordinator",
        "offline",
    ],
    "tree": [
        "--world",
        "gen:hall?size=24x24",
        "--agents",
        "6",
        "--steps",
        "8",
        "--coordinator",
        "offline",
        "--coordinators",
        "2",
        "--comm",
        "tree",
    ],
    "no-comm": ["--agents", "3", "--steps", "10", "--no-comm", "--seed", "2"],
    "comm-none": ["--agents", "3", "--steps", "10", "--comm", "none", "--seed", "2"],
    "house-search": [
        "--world",
        "gen:house",
        "--world-seed",
        "2",
        "--agents",
        "2",
        "--steps",
        "30",
        "--find",
        "toothbrush,laptop",
        "--random-starts",
        "--seed",
        "4",
    ],
    "no-prior": [
        "--world",
        "gen:house",
        "--world-seed",
        "3",
        "--agents",
        "2",
        "--steps",
        "20",
        "--find",
        "toothbrush",
        "--no-prior",
    ],
    "event": ["--agents", "3", "--steps", "8", "--schedule", "event"],
    "random": ["--agents", "2", "--steps", "10", "--model", "random", "--seed", "9"],
    "utility-frontier": [
        "--world",
        "gen:office",
        "--agents",
        "3",
        "--steps",
        "15",
        "--model",
        "utility-frontier",
        "--stop-when",
        "all-found",
    ],
    "mtsp": ["--world", "gen:maze", "--agents", "2", "--steps", "12", "--model", "mtsp-frontier"],
}
# Mistakes and modes: each command's exit code and the last line it prints.
REFUSALS = {
    "bad-agents": ["--agents", "0"],
    "bad-world": ["--world", "nowhere.yaml"],
    "comm-star-alone": ["--comm", "star"],
    "report-missing": ["--report", "/nonexistent/run"],
    "recover-missing": ["--recover", "/nonexistent/run"],
    "export-sft-without-out": ["--export-sft", "/nonexistent/run"],
    "sweep-missing": ["--sweep", "/nonexistent/sweep.yaml"],
    "report-with-agents": ["--report", "/nonexistent/run", "--agents", "3"],
    "export-world-not-generated": ["--export-world", "/nonexistent/world.yaml"],
    "goals-in-unity": ["--mode", "unity", "--decide", "goals"],
    "max-cost-negative": ["--max-cost", "-1"],
    "schedule-unknown": ["--schedule", "never"],
}
SWEEP = """\
out: {out}
fixed: {{world: "gen:house", steps: 25, stop_when: all-found}}
grid: {{agents: [1, 2], comm: [all, none], seed: [1, 2]}}
"""
KEYWORDS = [
    {},
    {"world": "office", "agents": 3, "comm": False},
    {"world": "gen:house", "world_seed": 4, "find": "toothbrush,laptop", "steps": "40"},
    {"agents": 4, "coordinator": "offline", "comm": "star", "schedule": "event"},
    {"model": "gpt-4o-mini", "max_cost": 0.5, "max_calls": 10, "decide": "goals", "reply_format": "json"},
]
CLOCK_KEYS = ("timings", "wall_seconds", "startup", "commit_ms")


def digest(item: Any) -> str:
    return hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()


def clockless(item: Any, left_out: tuple[str, ...] = ()) -> Any:
    """The item without what the clock decides (timings, and figures in seconds or milliseconds), nor the keys
    `left_out`, wherever they are."""
    if isinstance(item, dict):
        return {
            key: clockless(value, left_out)
            for key, value in item.items()
            if key not in CLOCK_KEYS + left_out and not key.endswith(("_seconds", "_ms"))
        }
    if isinstance(item, list):
        return [clockless(value, left_out) for value in item]
    return item


def one_comm(config: dict[str, Any]) -> dict[str, Any]:
    """config.json's communication as one name, however it was written: as `comm` (all, star, tree, none), or
    apart as `comm` (false for --no-comm) and `comm_topology`, as before they were one option."""
    if not isinstance(config.get("comm"), bool):
        return config
    topology = config.pop("comm_topology", "all")
    return {**config, "comm": topology if config["comm"] else "none"}


def here(text: str, run_dir: Path) -> str:
    """A run's file with the run's directory and this checkout's written as names: they differ between checkouts."""
    return text.replace(str(run_dir), "<run>").replace(str(ROOT), "<root>")


def main_py(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *arguments], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def run_case(arguments: list[str], work: Path, left_out: tuple[str, ...]) -> dict[str, str]:
    run_dir = work / "run"
    done = main_py(["--mode", "mock", *arguments, "--run-dir", str(run_dir), "-q"], work)
    if done.returncode != 0:
        return {"exit": str(done.returncode), "error": done.stderr.strip().splitlines()[-1:][0]}
    config = one_comm(json.loads(here((run_dir / "config.json").read_text(), run_dir)))
    trace = [clockless(json.loads(line), left_out) for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    summary = clockless(json.loads(here((run_dir / "summary.json").read_text(), run_dir)), left_out)
    return {"config": digest(config), "trace": digest(trace), "summary": digest(summary)}


def refusal(arguments: list[str], work: Path) -> dict[str, str]:
    done = main_py(arguments, work)
    lines = (done.stderr or done.stdout).strip().replace(str(ROOT), "<root>").splitlines()
    return {"exit": str(done.returncode), "last_line": lines[-1] if lines else ""}


def sweep_case(work: Path) -> dict[str, str]:
    out = work / "sweep-out"
    (work / "sweep.yaml").write_text(SWEEP.format(out=out))
    done = main_py(["--sweep", str(work / "sweep.yaml"), "--parallel", "2", "-q"], work)
    results = (out / "results.csv").read_text() if (out / "results.csv").is_file() else ""
    header, *rows = results.splitlines() or [""]
    columns = header.split(",")
    kept = [i for i, name in enumerate(columns) if not name.endswith(("_seconds", "_ms")) and name != "run_dir"]
    table = [[row.split(",")[i] for i in kept] for row in sorted(rows)]
    return {"exit": str(done.returncode), "results": digest([[columns[i] for i in kept], *table])}


def keyword_records() -> dict[str, str]:
    from explorer.config.keywords import make_config

    return {f"keywords-{i}": digest(one_comm(make_config(**options).to_dict())) for i, options in enumerate(KEYWORDS)}


def behaviour(left_out: tuple[str, ...]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        runs = {}
        for name, arguments in RUNS.items():
            (work / name).mkdir()
            runs[name] = run_case(arguments, work / name, left_out)
        return {
            "help": digest(main_py(["--help"], work).stdout),
            "refusals": {name: refusal(arguments, work) for name, arguments in REFUSALS.items()},
            "make_config": keyword_records(),
            "runs": runs,
            "sweep": sweep_case(work),
        }


def differences(before: dict[str, Any], after: dict[str, Any], where: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            line
            for key in sorted(set(before) | set(after))
            for line in differences(before.get(key), after.get(key), f"{where}/{key}")
        ]
    return [] if before == after else [f"{where}: {before!r} -> {after!r}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=figures_path, help="write the behaviour to this file")
    mode.add_argument("--check", type=Path, help="compare the behaviour with this file's")
    parser.add_argument("--leave-out", nargs="+", default=[], metavar="KEY", help="keys of a trace or summary left out")
    arguments = parser.parse_args()
    if arguments.record:
        left_out = tuple(arguments.leave_out)
        now = behaviour(left_out)
        write_figures(arguments.record, {"command": command_line("same_behaviour.py"), "left_out": left_out, **now})
        return 0
    recorded = json.loads(arguments.check.read_text())
    recorded.pop("command", None)
    left_out = tuple(recorded.pop("left_out", ()))
    found = differences(recorded, behaviour(left_out))
    print("\n".join(found) or "the same behaviour")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
