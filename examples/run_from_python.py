"""A policy of your own, run from Python: it walks ahead and turns where a wall stops it."""

import random

from explorer.api import Decision, DecisionContext, DecisionOutcome, PolicySetup, make_config, run


class Wanderer:
    """Walks straight ahead; where its last step was blocked, turns left or right."""

    name = "wanderer"  # the trace and the summary name the policy so
    reads_memories = False  # it never reads context.memories, so none are retrieved for it

    def __init__(self, setup: PolicySetup) -> None:
        self.seed = setup.seed  # the agent's own seed: the same on every run

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        # Seeded by the step, so that a call made again answers the same.
        rng = random.Random(f"{self.seed}:{context.team.step}")
        last = context.recent_actions[-1] if context.recent_actions else None
        action = rng.choice(["look_left", "look_right"]) if last and last["outcome"] == "blocked" else "forward"
        return DecisionOutcome(Decision(action=action, reason="walk on; turn at a wall"))


if __name__ == "__main__":
    # The command line's options, by name: --world apartment --agents 2 --steps 30 --seed 7.
    config = make_config(world="apartment", agents=2, steps=30, seed=7)
    result = run(config, policy=Wanderer)
    summary = result.summary
    print(f"status: {summary['status']}")
    print(f"objects found: {len(summary['objects_discovered'])} of {summary['total_objects']}")
    print(f"cells seen: {summary['team']['cells_seen']} of {summary['team']['total_cells']}")
    print(f"written to: {result.run_dir}")
