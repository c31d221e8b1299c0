"""A plug-in policy at a pace a person (or a test) can watch: the built-in explorer, a pause before each
decision, and a message every step (`--model tests.support.paced_policy:PacedExplorer`)."""

import time
from dataclasses import replace

from explorer.api import DecisionContext, DecisionOutcome, PolicySetup
from explorer.policies.offline import OfflineExplorer

PAUSE_SECONDS = 0.3


class PacedExplorer:
    name = "paced"
    reads_memories = False

    def __init__(self, setup: PolicySetup) -> None:
        self.explorer = OfflineExplorer()

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        time.sleep(PAUSE_SECONDS)
        decision = self.explorer.choose(context)
        said = decision.message_to_others or f"Step {context.team.step}: still exploring."
        return DecisionOutcome(replace(decision, message_to_others=said))
