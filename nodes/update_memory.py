from explorer.lockstep import StepReport
from nodes.base import StepNode


class UpdateMemoryNode(StepNode):
    """Remember the step (spec 7a), hand it to the team, and decide whether to go on."""

    timing_key = "update_memory"

    def prep(self, shared):
        text = (
            f"At position {shared['position']}, "
            f"I saw {shared['visible_objects']}. "
            f"I decided to {shared['action']}. "
            f"Reason: {shared['action_reason']}"
        )
        if shared["other_agent_messages"]:
            context = "; ".join(f"{m['sender']}: {m['message']}" for m in shared["other_agent_messages"])
            text += f" | Context from others: {context}"
        return text, shared["memory"]

    def exec(self, prep_res):
        text, memory = prep_res
        return memory.embed(text)

    def post(self, shared, prep_res, vector):
        text, memory = prep_res
        memory.add(text, vector)
        shared["explored_objects"].update(shared["visible_objects"])
        record = shared["step_record"]
        record.update({"memory_text": text, "timings": shared["timings"], "errors": shared["step_errors"]})
        report = StepReport(
            agent_id=shared["agent_id"],
            step=shared["step_count"],
            record=record,
            seen_objects=list(shared["visible_objects"]),
            outgoing_messages=shared["outgoing_messages"],
            pose=shared["action_result"].pose.to_dict(),
        )
        # Waits here until every agent has finished this step.
        shared["lockstep"].finish_step(shared["agent_id"], report)
        shared["timings"], shared["step_errors"] = {}, []
        return "end" if shared["step_count"] >= shared["max_steps"] else "continue"
