from __future__ import annotations

from nodes.framework import Node
from nodes.state import AgentState
from perception.base import PerceptionInterface

# The backend, the agent, its action, the message it says with it and to whom.
ExecutionPrep = tuple[PerceptionInterface, str, str, str, str]


class ExecutionNode(Node):
    """Carry out the decided action; the message goes to the team when the step is handed in."""

    def prep(self, shared: AgentState) -> ExecutionPrep:
        action = shared["action"]
        assert action is not None, "the Decision node decides before the Execution node acts"
        # Under --comm star and tree its message goes only up, to its coordinator, whatever recipient it named.
        recipient = shared["coordinator"] if shared["messages_up"] and shared["coordinator"] else shared["message_to"]
        return shared["perception"], shared["agent_id"], action, shared["message_to_others"], recipient

    # No exec: moving is the side effect itself, so it happens once, in post.

    def post(self, shared: AgentState, prep_res: ExecutionPrep, exec_res: None) -> str:
        perception, agent_id, action, message, recipient = prep_res
        result = perception.execute_action(agent_id, action)
        shared["action_result"] = result
        shared["action_history"].append(
            {
                "step": shared["step_count"],
                "action": action,
                "outcome": result.outcome,
                "detail": result.detail,
                "message": message,
            }
        )
        record = shared["step_record"]
        record.action = action
        record.result = result.to_dict()
        record.message_out = {"recipient": recipient, "message": message} if message else None
        record.lap("execution")
        return "default"
