from pocketflow import Node


class ExecutionNode(Node):
    """Carry out the decided action; the message goes to the team when the step is handed in."""

    def prep(self, shared):
        return shared["perception"], shared["agent_id"], shared["action"], shared["message_to_others"], shared["message_to"]

    # No exec: moving is the side effect itself, so it happens once, in post.

    def post(self, shared, prep_res, exec_res):
        perception, agent_id, action, message, recipient = prep_res
        result = perception.execute_action(agent_id, action)
        shared["action_result"] = result
        shared["action_history"].append(
            {"step": shared["step_count"], "action": action, "outcome": result.outcome, "detail": result.detail,
             "message": message}
        )
        record = shared["step_record"]
        record.action = action
        record.result = result.to_dict()
        record.message_out = {"recipient": recipient, "message": message} if message else None
        record.lap("execution")
        return "default"
