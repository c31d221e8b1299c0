"""--fallback offline: the built-in explorer decides the steps a model gave no usable decision for."""

from __future__ import annotations

from dataclasses import replace

from explorer.policies.offline import OfflineExplorer
from nodes.decision_context import DecisionContext
from nodes.interfaces import FALLBACK, DecisionOutcome, DecisionPolicy

FALLBACK_NOTE = "no usable model decision: the built-in explorer decided this step"


class OfflineFallback:
    """A model's policy, whose steps without a usable decision the built-in explorer decides.

    The explorer reads every step's context, so its map is whole when it is
    needed; the steps it decides are recorded as the `fallback` policy's and
    counted apart, so a result never credits the model with them.
    """

    def __init__(self, policy: DecisionPolicy) -> None:
        self.policy = policy
        self.name = policy.name
        self.reads_memories = policy.reads_memories
        self.explorer = OfflineExplorer()

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        outcome = self.policy.decide(prompt, context)
        if outcome.decision is not None:
            self.explorer.observe(context)  # safe to repeat: a retried step learns nothing twice
            return outcome
        decision = self.explorer.choose(context)
        return replace(outcome, decision=decision, decided_by=FALLBACK, notes=(*outcome.notes, FALLBACK_NOTE))
