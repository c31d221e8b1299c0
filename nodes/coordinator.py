"""The coordinator's loop: Review -> Direct -> HandIn, one tick at a time.

It neither sees nor moves. It reads what the explorers sent up (where each is,
what each saw), decides a directive for each explorer that needs one, and
sends them as messages, which reach the explorers after its msg_delay.
"""

from pocketflow import Flow, Node

from nodes.decision_context import team_context
from nodes.end import EndNode
from nodes.interfaces import DecisionOutcome, StepReport, StopRun
from nodes.record import StepRecord
from perception.base import Message


class ReviewNode(Node):
    """Take the explorers' reports that have reached the coordinator since its last tick."""

    def prep(self, shared):
        return shared["shared_memory"], shared["agent_id"], shared["step_count"] + 1

    # No exec: taking the reports empties the coordinator's inbox, so it is done once, in post.

    def post(self, shared, prep_res, exec_res):
        store, agent_id, step = prep_res
        shared["step_count"] = step
        shared["reports"] = store.read_reports(agent_id)
        shared["step_record"].lap("review")
        return "default"


class DirectNode(Node):
    """Decide the directives: the coordinator's policy, from the reports and the team's finds."""

    def prep(self, shared):
        context = {**team_context(shared), "reports": shared["reports"], "available_actions": shared["available_actions"]}
        return shared["policy"], context

    def exec(self, prep_res):
        policy, context = prep_res
        return policy.direct(context)

    def exec_fallback(self, prep_res, exc):
        if isinstance(exc, StopRun):
            raise exc
        return DecisionOutcome(None, error=repr(exc))  # no directives this tick; the explorers go on

    def post(self, shared, prep_res, outcome):
        policy, _ = prep_res
        shared["directives"] = list(outcome.directives)
        record = shared["step_record"]
        record.policy = policy.name
        record.prompt = outcome.prompt or ""
        record.attempts = list(outcome.attempts)
        record.parse_failure = outcome.parse_failure
        record.model_calls.extend(outcome.model_calls)
        record.notes.extend(outcome.notes)
        record.directives = list(outcome.directives)
        if outcome.error:
            record.errors.append(f"directing failed: {outcome.error}")
        record.lap("direct")
        return "default"


class CoordinatorHandInNode(Node):
    """Hand the tick to the team: its directives go out as messages, each to its explorer."""

    def prep(self, shared):
        agent_id, step = shared["agent_id"], shared["step_count"]
        outgoing = [Message(agent_id, d["to"], d["message"], step) for d in shared["directives"]]
        return shared["schedule"], StepReport(agent_id, step, shared["step_record"], [], outgoing)

    def post(self, shared, prep_res, exec_res):
        schedule, report = prep_res
        if not schedule.hand_in(report):
            return "end"
        shared["step_record"] = StepRecord(report.agent_id, report.step + 1)
        return "continue"


def build_coordinator_flow():
    review, hand_in = ReviewNode(), CoordinatorHandInNode()
    review >> DirectNode() >> hand_in
    hand_in - "continue" >> review
    hand_in - "end" >> EndNode()
    return Flow(start=review)
