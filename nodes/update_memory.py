from pocketflow import Node

from perception.base import objects_text


class UpdateMemoryNode(Node):
    """Make the step's memory (spec 7a): its text and embedding, added to the private index when the
    team commits the step, so that a step is in both the trace and the memory, or in neither."""

    def prep(self, shared):
        text = (
            f"At position {shared['position']}, "
            f"I saw {objects_text(shared['visible_objects'], shared['observation'].object_cells) or 'nothing notable'}. "
            f"I decided to {shared['action']}. "
            f"Reason: {shared['action_reason']}"
        )
        if shared["other_agent_messages"]:
            context = "; ".join(f"{m['sender']}: {m['message']}" for m in shared["other_agent_messages"])
            text += f" | Context from others: {context}"
        return text, shared["memory_index"]

    def exec(self, prep_res):
        text, memory = prep_res
        return memory.embed(text)

    def post(self, shared, prep_res, vector):
        text, _ = prep_res
        shared["memory_entry"] = (text, vector)
        record = shared["step_record"]
        record.memory_text = text
        record.lap("update_memory")
        return "default"
