"""An explorer under a coordinator: the coordinator's directive comes before its own choice.

As the field agents of the hierarchical framework the product was made from
carry out what their coordinator sends down: an action directive is carried
out at once, as it stands; a goal directive is walked to with the planner
(explorer/policies/grid_map.py, over the explorer's own map, unknown ground
taken to be free). A directive holds until it is done (the goal reached, the
action taken), found unreachable, outdated (a goal to look from, "explore
from", whose view the explorer's map shows all seen, by it or by teammates
as they reported: with message delays the coordinator's picture is old), or
replaced by a newer one; then the explorer's own policy decides again. Each
step says in the trace which directive it followed and how.

Under a system agent (--coordinators K) directives come from any coordinator
(an explorer moves between groups) and from the system agent, whose take
priority: while the explorer follows one of the system agent's, a
coordinator's is not taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import explorer.policies.sentences as sentences
from explorer.policies.grid_map import PoseKey
from explorer.policies.offline import OfflineExplorer
from nodes.decision_context import Cell, DecisionContext, DirectiveFollowed
from nodes.interfaces import DIRECTIVE, Decision, DecisionOutcome, DecisionPolicy


class DirectedPolicy:
    def __init__(
        self, policy: DecisionPolicy, coordinator: str, above: Sequence[str] = (), others: Sequence[str] = ()
    ) -> None:
        self.policy = policy
        self.name = policy.name
        self.reads_memories = policy.reads_memories  # a directive needs none
        self.coordinator = coordinator  # who sent the directive it follows (its coordinator, at first)
        self.directors = {coordinator, *above, *others}  # whose messages are directives: any coordinator's
        self.above = set(above)  # whose directives a coordinator's does not replace: the system agent's
        # The map and planner that walk the explorer to a goal: its own, where its policy keeps one.
        shared = policy if isinstance(policy, OfflineExplorer) else getattr(policy, "explorer", None)
        self.planner = shared or OfflineExplorer()
        self.map_kept_by_policy = shared is not None  # else this policy's map must see every step
        self.directive: sentences.DirectiveRead | None = None  # the one it follows
        self._decided: tuple[int, DecisionOutcome] | None = None

    def decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        if self._decided and self._decided[0] == context.team.step:
            return self._decided[1]  # a retried call
        outcome = self._decide(prompt, context)
        self._decided = (context.team.step, outcome)
        return outcome

    def _decide(self, prompt: str, context: DecisionContext) -> DecisionOutcome:
        replaced = []
        for message in context.teammates.messages:
            sender = message["sender"]
            read = sentences.read_directive(message["message"]) if sender in self.directors else None
            if read and not (self.directive and self.coordinator in self.above and sender not in self.above):
                if self.directive:
                    replaced.append(self.directive[0])
                self.directive, self.coordinator = read, sender
        if self.directive is None and self.map_kept_by_policy:
            return self.policy.decide(prompt, context)  # its map sees this step there
        pose = self.planner.observe(context)  # every step, so that the map is whole when a directive comes
        if self.directive is None:
            return self.policy.decide(prompt, context)
        number, target, action = self.directive
        about = DirectiveFollowed(
            id=number,
            kind="action" if action else "goal",
            target=action or list(target or ()),
            replaced=replaced,
            status="followed",
        )
        if action:
            self.directive = None  # carried out once, as it stands
            if action not in context.available_actions:
                return self._own(prompt, context, about, "unavailable")
            decision = Decision(action, reason=f"directive {number} from {self.coordinator}")
            return DecisionOutcome(decision, decided_by=DIRECTIVE, prompt="", directive=about)
        assert target is not None, "a directive gives a goal where it gives no action"
        x, y, z, facing = target
        view: PoseKey | None = (x, y, z, facing, 0) if facing else None  # the pose to look from, where given
        goal: Cell | PoseKey = view or (x, y, z)
        if pose[: len(goal)] == goal:
            self.directive = None
            return self._own(prompt, context, about, "done")
        if view and not self._still_unseen(view):
            self.directive = None
            return self._own(prompt, context, about, "outdated")
        first = self.planner.map.path_to(pose, goal, context.available_actions)
        if first is None:
            self.directive = None
            return self._own(prompt, context, about, "unreachable")
        where = f"({x}, {y}, {z})" + (f" facing {facing}" if facing else "")
        decision = Decision(
            first,
            reason=f"directive {number} from {self.coordinator}: walking to {where}",
            message_to_others=self.planner.news(context, view),
        )
        return DecisionOutcome(decision, decided_by=DIRECTIVE, prompt="", directive=about)

    def _still_unseen(self, goal: PoseKey) -> bool:
        """Whether the goal's view still shows a cell neither this explorer nor a teammate (by its reports) has seen."""
        grid = self.planner.map
        return any(cell not in grid.teammates_ground for cell in grid.unseen(grid.sight(goal), goal))

    def _own(self, prompt: str, context: DecisionContext, about: DirectiveFollowed, status: str) -> DecisionOutcome:
        """The explorer's own choice, on a step that ended a directive."""
        return replace(self.policy.decide(prompt, context), directive={**about, "status": status})
