"""The coordinator's loop: Review -> Direct -> HandIn, one tick at a time; the system agent's too.

It neither sees nor moves. It reads what the explorers sent up (where each is,
what each saw) and its mail (under a system agent), decides a directive for
each explorer that needs one, and sends them as messages, which reach the
explorers after its msg_delay, with the messages it passes on (--comm star
and tree), each as its first sender wrote it.
"""

from __future__ import annotations

from nodes.context_from_state import coordinator_context
from nodes.decision_context import CoordinatorContext
from nodes.end import EndNode
from nodes.framework import Flow, Node
from nodes.interfaces import CoordinatorPolicy, DecisionOutcome, ReportInbox, Schedule, StepReport, StopRun
from nodes.record import StepRecord, relayed_lines
from nodes.state import CoordinatorState
from perception.base import Message

DirectPrep = tuple[CoordinatorPolicy, CoordinatorContext]


class ReviewNode(Node):
    """Take the explorers' reports that have reached the coordinator since its last tick."""

    def prep(self, shared: CoordinatorState) -> tuple[ReportInbox, str, int]:
        return shared["shared_memory"], shared["agent_id"], shared["step_count"] + 1

    # No exec: taking the reports empties the coordinator's inbox, so it is done once, in post.

    def post(self, shared: CoordinatorState, prep_res: tuple[ReportInbox, str, int], exec_res: None) -> str:
        store, agent_id, step = prep_res
        shared["step_count"] = step
        shared["reports"] = store.read_reports(agent_id)
        messages = store.read_mailbox(agent_id)
        shared["messages"] = [{"sender": m.sender, "recipient": m.recipient, "message": m.message} for m in messages]
        record = shared["step_record"]
        record.messages_in = [m.to_dict() for m in messages]
        record.lap("review")
        return "default"


class DirectNode(Node):
    """Decide the directives: the coordinator's policy, from the reports and the team's finds."""

    def prep(self, shared: CoordinatorState) -> DirectPrep:
        return shared["policy"], coordinator_context(shared)

    def exec(self, prep_res: DirectPrep) -> DecisionOutcome:
        policy, context = prep_res
        return policy.direct(context)

    def exec_fallback(self, prep_res: DirectPrep, exc: Exception) -> DecisionOutcome:
        if isinstance(exc, StopRun):
            raise exc
        return DecisionOutcome(None, error=repr(exc))  # no directives this tick; the explorers go on

    def post(self, shared: CoordinatorState, prep_res: DirectPrep, outcome: DecisionOutcome) -> str:
        policy, _ = prep_res
        shared["directives"] = list(outcome.directives)
        shared["relayed"] = list(outcome.relayed)
        record = shared["step_record"]
        record.policy = policy.name
        record.prompt = outcome.prompt or ""
        record.parse_failure = outcome.parse_failure
        record.model_calls.extend(outcome.model_calls)
        record.notes.extend(outcome.notes)
        record.directives = list(outcome.directives)
        record.relayed = relayed_lines(outcome.relayed)
        if outcome.error:
            record.errors.append(f"directing failed: {outcome.error}")
        record.lap("direct")
        return "default"


class CoordinatorHandInNode(Node):
    """Hand the tick to the team: its directives go out as messages, each to its explorer."""

    def prep(self, shared: CoordinatorState) -> tuple[Schedule, StepReport]:
        agent_id, step = shared["agent_id"], shared["step_count"]
        outgoing = [Message(agent_id, d["to"], d["message"], step) for d in shared["directives"]]
        outgoing += shared["relayed"]  # passed on as their first senders wrote them
        return shared["schedule"], StepReport(agent_id, step, shared["step_record"], [], outgoing)

    def post(self, shared: CoordinatorState, prep_res: tuple[Schedule, StepReport], exec_res: None) -> str:
        schedule, report = prep_res
        if not schedule.hand_in(report):
            return "end"
        shared["step_record"] = StepRecord(report.agent_id, report.step + 1)
        return "continue"


def build_coordinator_flow() -> Flow:
    review, hand_in = ReviewNode(), CoordinatorHandInNode()
    review >> DirectNode() >> hand_in
    hand_in - "continue" >> review
    hand_in - "end" >> EndNode()
    return Flow(start=review)
