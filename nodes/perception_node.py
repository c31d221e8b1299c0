from nodes.base import StepNode


class PerceptionNode(StepNode):
    """Look around: the step's pose, visible objects and caption."""

    timing_key = "perception"

    def prep(self, shared):
        return shared["perception"], shared["agent_id"], shared["step_count"] + 1

    def exec(self, prep_res):
        perception, agent_id, step = prep_res
        return perception.observe(agent_id, step)

    def post(self, shared, prep_res, observation):
        shared["step_count"] += 1
        shared["observation"] = observation
        shared["pose"] = observation.pose
        shared["position"] = observation.pose.describe()
        shared["visible_objects"] = list(observation.visible_objects)
        shared["visible_caption"] = observation.caption
        shared["step_record"] = {
            "agent_id": shared["agent_id"],
            "step": shared["step_count"],
            "pose": observation.pose.to_dict(),
            "visible_objects": list(observation.visible_objects),
            "visible_caption": observation.caption,
            "image_path": observation.image_path,
            "llm": {"calls": [reply.accounting("vision") for reply in observation.model_calls]},
        }
        shared["step_errors"].extend(observation.errors)
        return "default"
