"""A plug-in policy at a pace a person (or a test) can watch: the built-in explorer, a pause before each
decision, and a message every step (`--model harness.paced_policy:PacedExplorer`).

With PACED_HOLD=FILE in its environment, each agent waits before its HOLD_STEP-th decision until FILE
is there (at most HOLD_SECONDS): a test sees the run mid-way, however busy the machine, then lets it go on.
"""

import os
import time
from dataclasses import replace
from pathlib import Path

from explorer.api import DecisionContext, DecisionOutcome, PolicySetup
from explorer.policies.offline import OfflineExplorer

PAUSE_SECONDS = 0.3
HOLD_STEP = 3
HOLD_SECONDS = 300


class PacedExplorer:
    name = "paced"
    reads_memories = False

    def __init__(self, setup: PolicySetup) -> None:
        self.explorer = OfflineExplorer()
        self.hold = os.environ.get("PACED_HOLD")

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        time.sleep(PAUSE_SECONDS)
        if self.hold and context.team.step == HOLD_STEP:
            deadline = time.monotonic() + HOLD_SECONDS
            while not Path(self.hold).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        decision = self.explorer.choose(context)
        said = decision.message_to_others or f"Step {context.team.step}: still exploring."
        return DecisionOutcome(replace(decision, message_to_others=said))
