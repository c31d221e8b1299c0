from explorer.replies import resolve_recipient
from nodes.base import StepNode


class ExecutionNode(StepNode):
    """Carry out the decided action; queue the message for delivery at the step's end."""

    timing_key = "execution"

    def prep(self, shared):
        return (
            shared["perception"],
            shared["agent_id"],
            shared["action"],
            shared["message_to_others"],
            shared["message_to"],
            shared["team"],
        )

    def exec(self, prep_res):
        """The messages to send as [(recipient, text)], and a note if the recipient was changed."""
        _, agent_id, _, message, message_to, team = prep_res
        if not message:
            return [], None
        recipient, note = resolve_recipient(message_to, agent_id, team)
        return [(recipient, message)], note

    def post(self, shared, prep_res, exec_res):
        perception, agent_id, action, message, _, _ = prep_res
        outgoing, note = exec_res
        # Moving is the side effect itself, so it happens here, once.
        result = perception.execute_action(agent_id, action)
        shared["action_result"] = result
        shared["outgoing_messages"] = outgoing
        shared["action_history"].append(
            {
                "step": shared["step_count"],
                "action": action,
                "outcome": result.outcome,
                "detail": result.detail,
                "message": message,
            }
        )
        shared["step_record"].update(
            {
                "action": action,
                "result": result.to_dict(),
                "message_out": {"recipient": outgoing[0][0], "message": message} if outgoing else None,
                "notes": [note] if note else [],
            }
        )
        return "default"
