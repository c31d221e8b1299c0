"""The Python API: a run made with the command line's options, run, and its summary read back; and what a
policy of your own is written against.

    from explorer.api import make_config, run

    result = run(make_config(world="office", agents=3, steps=40, model="mypolicies:Forward"))
    print(result.summary["coverage"], result.run_dir)

A policy is a class made with a `PolicySetup` (its agent's id and seed) that has a `name` and
`decide(prompt, context) -> DecisionOutcome`: `context` is the `DecisionContext` the prompt is made from
(nodes/decision_context.py), and a `Decision` names one of `context.available_actions`. A policy that never
reads `context.memories` says so with `reads_memories = False`: none are then retrieved for it, which saves
much of a step's time. Name it on the command
line as `--model package.module:Class`, in a profile's `model:`, in `make_config(model=...)`, or give the
class itself to `run(config, policy=Class)`.

`load_sweep(out)` reads the sweep directory `out` (`python main.py --sweep FILE.yaml`) as a `SweepData` of
pandas DataFrames: `runs`, `conditions` and `steps` (explorer/sweep/tidy.py). It needs the `data` extra.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.cli.console import RunConsole
from explorer.config.keywords import make_config
from explorer.config.run_config import RunConfig
from explorer.policies.plugin import PolicySetup, is_plugin, plugin_name
from explorer.records.errors import ConfigError
from explorer.run.runner import ExplorationRun
from explorer.run.stop import RunFailed
from explorer.sweep.tidy import SweepData, load_sweep
from memory.embedder import SentenceEmbedder
from nodes.decision_context import DecisionContext
from nodes.interfaces import Decision, DecisionOutcome, DecisionPolicy
from perception.actions import ACTIONS
from perception.yaml_files import FileProblem

__all__ = [
    "ACTIONS",
    "ConfigError",
    "Decision",
    "DecisionContext",
    "DecisionOutcome",
    "DecisionPolicy",
    "FileProblem",
    "PolicySetup",
    "RunConfig",
    "RunFailed",
    "RunResult",
    "SweepData",
    "load_sweep",
    "make_config",
    "run",
]


@dataclass(frozen=True)
class RunResult:
    """A finished run: where it was written, and its summary (summary.json's content)."""

    run_dir: Path
    summary: dict[str, Any]


def run(config: RunConfig, policy: type | None = None, embedder: SentenceEmbedder | None = None) -> RunResult:
    """Run to its end (or Ctrl-C) and return where it was written and its summary.

    `policy`, a policy class defined at a module's top level, is the same as `model="module:Class"`.
    `embedder` shares a loaded embedding model between runs. Raises ConfigError or FileProblem where the
    config makes no run (before anything is written), RunFailed where the run failed.
    """
    if policy is not None:
        name = plugin_name(policy)
        if not is_plugin(name):
            raise ConfigError(f"policy={name}: define the policy class at a module's top level, so it can be named")
        config = config.with_options(model=name)
    exploration = ExplorationRun(config.check(), embedder=embedder, view=RunConsole.shown)
    return RunResult(exploration.run_dir, exploration.execute())
