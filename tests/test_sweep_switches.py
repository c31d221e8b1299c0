"""A sweep's on/off options (issue 50, defect 1): each switch in a sweep file sets its own option, as its flag on
the command line does. The switches are read from RunConfig's declarations, so a new one is covered here."""

from __future__ import annotations

import json
from pathlib import Path

from explorer.config.command_line import run_options
from harness.sweeps import write_sweep
from tests.support.in_process import sweep_here

FIXED = {"agents": "1", "steps": "1", "world": "apartment"}


def switches() -> list[str]:
    """Every on/off run option, as a sweep file names it: its flag without the dashes (--no-comm, a spelling of
    --comm none, among them)."""
    return [name for name, (_, spec) in run_options().items() if spec.switch_on or spec.switch_off]


def conditions() -> dict[str, tuple[str, list[str]]]:
    """{condition name: (its options in the sweep file, the same run's arguments on the command line)}: each
    switch turned on alone, every switch left off, and `comm: false`, a sweep file's other way to --no-comm."""
    named = {switch: (f"{switch}: true", [f"--{switch}"]) for switch in switches()}
    named["none"] = (", ".join(f"{switch}: false" for switch in switches()), [])
    named["comm-false"] = ("comm: false", ["--no-comm"])
    return named


def recorded(run_dir: Path) -> dict:
    return json.loads((run_dir / "config.json").read_text(encoding="utf-8"))


def test_every_switch_in_a_sweep_file_records_what_its_flag_records(tmp_path, in_process):
    assert {"no-comm", "no-prior", "no-preflight", "random-starts"} <= set(switches())
    out = tmp_path / "out"
    listed = "\n".join(f"  - {{name: {name}, {options}}}" for name, (options, _) in conditions().items())
    fixed = ", ".join(f"{key}: {value}" for key, value in FIXED.items())
    result = sweep_here(
        write_sweep(tmp_path, f"out: {out}\nconditions:\n{listed}\nfixed: {{{fixed}}}\n"), "--parallel", "2"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    fixed_arguments = [argument for key, value in FIXED.items() for argument in (f"--{key}", value)]
    for name, (_, arguments) in conditions().items():
        run_dir = tmp_path / f"cli-{name}"
        assert in_process.run(*fixed_arguments, *arguments, "--run-dir", str(run_dir), "-q").returncode == 0
        assert recorded(out / f"condition={name}") == recorded(run_dir), name
