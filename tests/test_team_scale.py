"""A team's steps cost each agent the same whatever the team's size: what was made cheaper must decide the same.

The built-in explorer reckons with every teammate each step (where it stands and looks, where it said it is
heading); the schedule takes every agent's hand-in; the prompt shows the nearest teammates. Those were made
cheaper in a large team (issue 51, part 4) without changing a decision: a team's trace is pinned here, as it
was before.
"""

from __future__ import annotations

import hashlib
import json

from explorer.config.run_config import RunConfig
from explorer.records.trace import read_trace
from explorer.run.runner import ExplorationRun
from tests.support.hash_embedder import HashEmbedder

TIMING_FIELDS = ("timings",)
# The trace of 24 offline agents, 6 steps, on a cluttered 30 x 30 hall, as the explorer made it before
# issue 51's part 4 (its timings left out).
PINNED = "62b235fa88c32e94a132f228059b7e796c7da23e36b4075425a331c4ba0c32aa"


def test_a_large_teams_trace_is_as_it_was_before_its_per_agent_costs_were_made_flat(tmp_path):
    config = RunConfig(world="gen:hall?size=30x30", agents=24, steps=6, seed=3, run_dir=tmp_path / "run", verbosity=-1)
    ExplorationRun(config.check(), embedder=HashEmbedder()).execute()
    lines = [
        {k: v for k, v in line.items() if k not in TIMING_FIELDS}
        for line in read_trace(tmp_path / "run" / "trace.jsonl")
    ]
    assert sum(1 for line in lines if line.get("message_out")) > 10  # the teammates talk: their claims count
    assert hashlib.sha256(json.dumps(lines, sort_keys=True).encode()).hexdigest() == PINNED
