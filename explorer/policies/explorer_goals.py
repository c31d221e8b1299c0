"""The built-in explorer choosing goals as a model would (`--model offline --decide goals`): a teacher.

The goal-level loop of explorer/policies/goals.py, asked at the same moments and shown the same prompt a
model is, but the goal is the explorer's own choice: its current goal while that is still worth
KEEP_SHARE of the best, else the best. Its run's trace then holds, at each step a model would have been
asked, the prompt a model would have seen and the planner's choice (the note "...; chose G2"): what
`--export-sft` turns into training data for a model that is to choose as the planner does.
"""

from __future__ import annotations

from explorer.policies.goals import GoalLoop
from explorer.policies.grid_map import KEEP_SHARE, Goal
from explorer.policies.offline import OfflineExplorer
from nodes.decision_context import DecisionContext
from nodes.interfaces import Decision, DecisionOutcome

EXPLORER_REASON = "the goal that shows the most unseen ground for its distance"


class ExplorerGoals(GoalLoop):
    def __init__(self, explorer: OfflineExplorer | None = None) -> None:
        super().__init__(OfflineExplorer.name, explorer)

    def choose_goal(
        self, prompt: str, context: DecisionContext, goals: list[Goal], current: Goal | None
    ) -> tuple[DecisionOutcome, int | None]:
        return DecisionOutcome(Decision("", reason=EXPLORER_REASON), prompt=prompt), _explorer_choice(goals, current)


def _explorer_choice(goals: list[Goal], current: Goal | None) -> int:
    """The number of the goal the explorer walks to (explorer/policies/offline.py's rule, among `goals`)."""
    if current is None or current not in goals or current.utility < KEEP_SHARE * goals[0].utility:
        return 1
    return goals.index(current) + 1
