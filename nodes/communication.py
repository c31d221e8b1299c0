from __future__ import annotations

from nodes.framework import Node
from nodes.state import AgentState
from perception.base import PerceptionInterface

CommunicationPrep = tuple[PerceptionInterface, str, bool]  # the backend, the agent, whether messages are on


class CommunicationNode(Node):
    """Read the messages other agents sent; they arrive between steps."""

    def prep(self, shared: AgentState) -> CommunicationPrep:
        return shared["perception"], shared["agent_id"], shared["comm_enabled"]

    # No exec: reading a mailbox empties it, so it happens once, in post,
    # not in an exec that PocketFlow may retry.

    def post(self, shared: AgentState, prep_res: CommunicationPrep, exec_res: None) -> str:
        perception, agent_id, comm_enabled = prep_res
        messages = perception.poll_messages(agent_id) if comm_enabled else []
        shared["other_agent_messages"] = [
            {"sender": m.sender, "recipient": m.recipient, "message": m.message} for m in messages
        ]
        record = shared["step_record"]
        record.messages_in = [m.to_dict() for m in messages]
        record.lap("communication")
        return "default"
