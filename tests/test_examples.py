"""The README's examples: each is a file under examples/, shown whole in the README or docs/python.md after its
marker (`<!-- example: examples/NAME.py -->`), and each runs as they say it does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.optional import needs
from tests.support.paths import ROOT

EXAMPLES = (
    "examples/run_from_python.py",
    "examples/pettingzoo_random.py",
    "examples/sweep_tables.py",
    "examples/pettingzoo_policies.py",
    "examples/space_policy.py",
    "examples/gymnasium_make.py",
)


def run_example(name: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / name), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


SHOWN_IN = (ROOT / "README.md", ROOT / "docs" / "python.md")  # the README, and the environments' page


def readme_block(name: str) -> str | None:
    """The fenced code block after the marker for `name` in the README or docs/python.md, or None."""
    marker = re.escape(f"<!-- example: {name} -->")
    shown = "".join(path.read_text(encoding="utf-8") for path in SHOWN_IN)
    found = re.search(marker + r"\s*```python\n(.*?)```", shown, re.S)
    return found.group(1) if found else None


def docs_output(after: str) -> str:
    """The first fenced block of docs/python.md after the text `after`: what a command there prints."""
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    found = re.search(r"```\n(.*?)```", text[text.index(after) :], re.S)
    assert found, f"docs/python.md shows no output after {after!r}"
    return found.group(1)


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_readme_shows_each_example_as_its_file_is(name):
    block = readme_block(name)
    assert block is not None, f"no `<!-- example: {name} -->` followed by a ```python block"
    assert block == (ROOT / name).read_text(encoding="utf-8")


def test_the_python_api_example_runs_a_policy_of_its_own(tmp_path):
    result = run_example("examples/run_from_python.py", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "status: completed" in result.stdout
    found = re.search(r"^objects found: (\d+) of 12$", result.stdout, re.M)
    assert found and int(found.group(1)) > 0
    (run_dir,) = (tmp_path / "runs").iterdir()  # runs/<timestamp>/ where it was started
    assert f"written to: {run_dir}" in result.stdout
    # docs/python.md shows what it prints: the same lines, the run directory absolute as printed.
    shown = docs_output("`python examples/run_from_python.py` prints").splitlines()
    printed = result.stdout.splitlines()[-len(shown) :]
    assert shown[:-1] == printed[:-1]
    stamp = r"written to: /(.+/)?runs/\d{8}-\d{6}"
    assert re.fullmatch(stamp, shown[-1]) and re.fullmatch(stamp, printed[-1])
    assert '"policy": "wanderer"' in (run_dir / "trace.jsonl").read_text()


def test_the_pettingzoo_example_runs_a_random_baseline_for_300_steps(tmp_path):
    needs("pettingzoo")
    result = run_example("examples/pettingzoo_random.py", tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "steps: 300"
    assert [line.split(" total reward: ")[0] for line in lines[1:4]] == ["Agent1", "Agent2", "Agent3"]
    found = re.fullmatch(r"objects found: (\d+) of (\d+)", lines[4])
    assert found and 0 < int(found.group(1)) <= int(found.group(2))
    assert lines == docs_output("(three\nexplorers in a generated house, 300 steps), prints").splitlines()


def test_the_pettingzoo_example_compares_the_explorer_random_and_a_plugin(tmp_path):
    needs("pettingzoo")
    result = run_example("examples/pettingzoo_policies.py", tmp_path)
    assert result.returncode == 0, result.stderr
    pattern = r"(\S+): (\d+) of 17 objects found in 100 steps"
    found = {m.group(1): int(m.group(2)) for m in map(re.compile(pattern).fullmatch, result.stdout.splitlines()) if m}
    assert list(found) == ["offline", "random", "examples.run_from_python:Wanderer"]
    assert found["offline"] > found["examples.run_from_python:Wanderer"] > 0 and found["offline"] > found["random"]


def test_the_gymnasium_make_example_runs_the_explorer_and_draws_its_map(tmp_path):
    needs("gymnasium")
    result = run_example("examples/gymnasium_make.py", tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    reward = re.fullmatch(r"total reward: (\d+\.\d)", lines[0])
    assert reward and float(reward.group(1)) > 5  # the explorer finds objects and ground a random walk would not
    assert len(lines[1:-1]) == 30 and all(len(line) == 80 for line in lines[1:-1])  # 40 x 30 cells, two characters each
    assert re.search(r"1[\^>v<]", result.stdout) and lines[-1].startswith("1 Agent1")


def test_the_sweep_example_runs_a_policy_of_the_environments_spaces(tmp_path):
    needs("gymnasium")
    from harness.sweeps import read_results
    from tests.support.in_process import sweep_here

    sweep_file = ROOT / "examples/space_policy_sweep.yaml"
    assert any(sweep_file.read_text(encoding="utf-8") in path.read_text(encoding="utf-8") for path in SHOWN_IN)
    result = sweep_here(sweep_file, "--parallel", "2", cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    rows = read_results(tmp_path / "runs/sweep-space-policy")
    assert [(row["condition"], row["status"]) for row in rows] == [
        (name, "completed") for name in ("explorer", "random", "look-ahead") for _ in (1, 2)
    ]
    trace = (tmp_path / "runs/sweep-space-policy/condition=look-ahead,seed=1/trace.jsonl").read_text()
    assert '"policy": "look-ahead"' in trace and '"action": "forward"' in trace and '"action": "look_right"' in trace
