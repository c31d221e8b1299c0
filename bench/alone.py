"""A limit for the benches: the built-in explorer with no word from its team at all. Besides --no-comm's
silence, each agent is kept from its teammates' poses in the team's store, so it decides as if alone (the
store's finds aside: the team's objects count once). --no-comm's steps over the offline team's say what
messages pay; this team's over --no-comm's say what the teammates' poses in the store pay on top of them.
"""

from __future__ import annotations

from dataclasses import replace

from explorer.policies.offline import OfflineExplorer
from nodes.decision_context import DecisionContext, TeammatePoses
from nodes.interfaces import DecisionOutcome


class AloneExplorer(OfflineExplorer):
    """The built-in explorer, told no teammate's pose."""

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        unknown = TeammatePoses(dict.fromkeys(context.teammates.positions))
        return super().decide(prompt, replace(context, teammates=replace(context.teammates, positions=unknown)))


def alone_policies():
    """A policy factory: AloneExplorers."""
    return lambda *_: AloneExplorer()
