from __future__ import annotations

import threading
from time import perf_counter

from nodes.context_from_state import decision_context
from nodes.decision_context import DecisionContext, render_prompt
from nodes.framework import Node
from nodes.interfaces import Decision, DecisionOutcome, DecisionPolicy, RunStopped, StopRun
from nodes.state import AgentState
from perception.actions import safe_action

FALLBACK_REASON = "fallback: no usable decision"
# the policy, its context, the prompt made from it, the run's slots on the cores for a policy that only computes
DecisionPrep = tuple[DecisionPolicy, DecisionContext, str, threading.BoundedSemaphore | None]
Decided = tuple[DecisionOutcome, float]  # the outcome, and the seconds it waited for a slot on the cores first


class DecisionNode(Node):
    """Ask the agent's decision policy what to do; never let a bad reply stop the run."""

    def prep(self, shared: AgentState) -> DecisionPrep:
        context = decision_context(shared)
        return shared["policy"], context, render_prompt(context), shared["cpu_slots"]

    def exec(self, prep_res: DecisionPrep) -> Decided:
        policy, context, prompt, cpu_slots = prep_res
        if cpu_slots is None:
            return policy.decide(prompt, context), 0.0
        asked = perf_counter()
        with cpu_slots:
            waited = perf_counter() - asked
            return policy.decide(prompt, context), waited

    def exec_fallback(self, prep_res: DecisionPrep, exc: Exception) -> Decided:
        return failed_decision(exc), 0.0

    def post(self, shared: AgentState, prep_res: DecisionPrep, decided: Decided) -> str:
        policy, context, prompt, _ = prep_res
        outcome, waited = decided
        decision = carried_out(outcome, context)
        shared["action"] = decision.action
        shared["action_reason"] = decision.reason
        shared["message_to_others"] = decision.message_to_others if shared["comm_enabled"] else ""
        shared["message_to"] = decision.message_to
        record = shared["step_record"]
        record.policy = outcome.decided_by or policy.name
        record.prompt = prompt if outcome.prompt is None else outcome.prompt
        record.decision = decision.to_dict() if outcome.decision else None
        record.parse_failure = outcome.parse_failure
        record.model_calls.extend(outcome.model_calls)
        record.notes.extend(outcome.notes)
        record.directive = outcome.directive
        if outcome.error:
            record.errors.append(f"decision failed: {outcome.error}")
        record.lap("decision", waited)
        return "default"


def failed_decision(exc: Exception) -> DecisionOutcome:
    """The outcome of a `decide` that raised `exc`: StopRun and RunStopped are raised again (every later
    step would fail the same way; or the run is stopping); any other failure of the policy's own (a bug,
    say) makes the agent scan, and the run goes on."""
    if isinstance(exc, (StopRun, RunStopped)):
        raise exc
    return DecisionOutcome(None, error=repr(exc))


def carried_out(outcome: DecisionOutcome, context: DecisionContext) -> Decision:
    """The decision the step carries out: the policy's, else a scan; bounded, for a policy of the user's own
    may say anything, at any length."""
    chosen = outcome.decision or Decision(safe_action(context.available_actions), reason=FALLBACK_REASON)
    return chosen.bounded()
