from pocketflow import Node


class CommunicationNode(Node):
    """Read the messages other agents sent; they arrive between steps."""

    def prep(self, shared):
        return shared["perception"], shared["agent_id"], shared["comm_enabled"]

    # No exec: reading a mailbox empties it, so it happens once, in post,
    # not in an exec that PocketFlow may retry.

    def post(self, shared, prep_res, exec_res):
        perception, agent_id, comm_enabled = prep_res
        messages = perception.poll_messages(agent_id) if comm_enabled else []
        shared["other_agent_messages"] = [
            {"sender": m.sender, "recipient": m.recipient, "message": m.message} for m in messages
        ]
        record = shared["step_record"]
        record.messages_in = [m.to_dict() for m in messages]
        record.lap("communication")
        return "default"
