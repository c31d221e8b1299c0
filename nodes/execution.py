from nodes.base import StepNode


class ExecutionNode(StepNode):
    """Carry out the decided action; queue the message for delivery at the step's end."""

    timing_key = "execution"

    def prep(self, shared):
        return shared["perception"], shared["agent_id"], shared["action"]

    # No exec: moving is the side effect itself, so it happens once, in post.

    def post(self, shared, prep_res, exec_res):
        perception, agent_id, action = prep_res
        result = perception.execute_action(agent_id, action)
        message = shared["message_to_others"]
        outgoing = [(shared["message_to"], message)] if message else []
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
            }
        )
        return "default"
