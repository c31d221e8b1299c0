"""What reckoning with its nearest teammates only costs a large team's exploration: `python bench/neighbours.py`
prints the table and writes bench/neighbours.json.

In a team of more than NEIGHBOURS + 1 the built-in explorer reckons with its NEIGHBOURS (16) nearest
teammates (explorer/policies/offline.py), so that an agent-step costs the same whatever the team's size
(docs/performance.md, a thousand agents). Against it, the same team whose explorers reckon with every
teammate, as they did before: teams of 32 and 64 on generated offices of 60 x 60 cells (bench/topology.py's
tree world), lock-step, over seeds the rule was not chosen on (topology's held-out seeds; the seed places
the team and makes the world). Per run: the share of the cells the team saw in STEPS steps, the steps to
half of them (STEPS + 1 where not reached, a lower bound), and the wall time per agent-step. The explorer reads no memories, so the runs embed with a hash
(explorer/testing/hash_embedder.py), and the wall times are the explorer's and the nodes' alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.exploration import geometric_mean  # noqa: E402
from bench.output import command_line, figures_path, write_figures  # noqa: E402
from bench.run import after_first_step  # noqa: E402
from bench.topology import team_summary  # noqa: E402
from explorer.policies import offline  # noqa: E402

WORLD = "gen:office?size=60x60"
TEAMS = (32, 64)
SEEDS = (11, 12)
STEPS = 100
SHARE = "50%"


def run(agents: int, seed: int, whole_team: bool) -> dict:
    """One run: the share of the cells seen, the steps to SHARE of them (or STEPS + 1), and ms per agent-step
    after the first step."""
    neighbours = offline.NEIGHBOURS
    offline.NEIGHBOURS = agents if whole_team else neighbours  # every teammate, or the nearest 16
    try:
        summary = team_summary(WORLD, agents, seed, STEPS, {})
    finally:
        offline.NEIGHBOURS = neighbours
    _, per_agent_step = after_first_step(summary, agents)
    team = summary["team"]
    return {
        "cells_seen": round(team["cells_seen"] / team["total_cells"], 3),
        "steps_to_half": team["steps_to_cells"][SHARE] or STEPS + 1,
        "ms_per_agent_step": round(per_agent_step * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=figures_path, default=ROOT / "bench" / "neighbours.json", help="the figures")
    args = parser.parse_args()
    rows = []
    for agents in TEAMS:
        for seed in SEEDS:
            nearest, whole = run(agents, seed, whole_team=False), run(agents, seed, whole_team=True)
            rows.append(
                {
                    "agents": agents,
                    "seed": seed,
                    "neighbours": nearest,
                    "whole_team": whole,
                    "cells_ratio": round(nearest["cells_seen"] / whole["cells_seen"], 3),
                    "steps_ratio": round(nearest["steps_to_half"] / whole["steps_to_half"], 3),
                }
            )
            print(f"{agents} agents, seed {seed}: {nearest} with its nearest {offline.NEIGHBOURS}, {whole} with all")
    overall = {
        ratio: {
            str(agents): geometric_mean([row[ratio] for row in rows if row["agents"] == agents]) for agents in TEAMS
        }
        for ratio in ("cells_ratio", "steps_ratio")
    }
    _print_table(rows, overall)
    figures = {"command": command_line("neighbours.py"), "world": WORLD, "steps": STEPS}
    write_figures(args.out, {**figures, "neighbours": offline.NEIGHBOURS, "rows": rows, "overall": overall})
    print(f"Figures written to {args.out}")


def _print_table(rows: list[dict], overall: dict[str, dict[str, float]]) -> None:
    print(
        f"| agents | seed | cells seen, nearest {offline.NEIGHBOURS} / all | x | steps to {SHARE} | x | ms an agent-step |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        nearest, whole = row["neighbours"], row["whole_team"]
        print(
            f"| {row['agents']} | {row['seed']} | {nearest['cells_seen']} / {whole['cells_seen']} | {row['cells_ratio']} | "
            f"{nearest['steps_to_half']} / {whole['steps_to_half']} | {row['steps_ratio']} | "
            f"{nearest['ms_per_agent_step']} / {whole['ms_per_agent_step']} |"
        )
    print("nearest over all, geometric means over seeds:", overall)


if __name__ == "__main__":
    main()
