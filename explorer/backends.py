"""Decision backends behind one seam: `complete(prompt, context) -> Reply`.

Every backend answers with reply text that goes through the same parser, so
the offline and random baselines exercise the path a language model takes.
"""

from __future__ import annotations

import hashlib
import random

from explorer import llm
from explorer.llm import Reply
from explorer.offline import OfflineExplorer
from explorer.replies import Decision

OFFLINE, RANDOM = "offline", "random"


def stable_seed(*parts) -> int:
    """A seed that is the same on every run and platform (unlike hash())."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


class RandomBackend:
    """A uniformly random available action each step: the baseline."""

    def __init__(self, seed):
        self.seed = seed

    def complete(self, prompt, context):
        # Seeded by step, so a retried call gives the same answer.
        rng = random.Random(stable_seed(self.seed, context["step"]))
        action = rng.choice(context["available_actions"])
        return Reply(Decision(action=action, reason="random baseline").to_yaml(), RANDOM)


class LiteLLMBackend:
    def __init__(self, model, api_base=None):
        self.model = model
        self.api_base = api_base

    def complete(self, prompt, context):
        return llm.complete(self.model, prompt, api_base=self.api_base)


def make_backend(model, agent_id, seed, api_base=None):
    agent_seed = stable_seed(seed, agent_id)
    if model == OFFLINE:
        return OfflineExplorer(agent_seed)
    if model == RANDOM:
        return RandomBackend(agent_seed)
    return LiteLLMBackend(model, api_base)
