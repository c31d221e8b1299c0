from __future__ import annotations

from nodes.framework import Node
from nodes.record import ModelCall
from nodes.state import AgentState
from perception.base import Observation, PerceptionInterface

PerceptionPrep = tuple[PerceptionInterface, str, int]  # the backend, the agent, the step it starts


class PerceptionNode(Node):
    """Look around: the step's pose, visible objects and caption."""

    def prep(self, shared: AgentState) -> PerceptionPrep:
        return shared["perception"], shared["agent_id"], shared["step_count"] + 1

    def exec(self, prep_res: PerceptionPrep) -> Observation:
        perception, agent_id, step = prep_res
        return perception.observe(agent_id, step)

    def post(self, shared: AgentState, prep_res: PerceptionPrep, observation: Observation) -> str:
        shared["step_count"] = prep_res[2]
        shared["observation"] = observation
        shared["position"] = observation.pose.describe()
        shared["visible_objects"] = list(observation.visible_objects)
        shared["visible_caption"] = observation.caption
        record = shared["step_record"]
        record.time, record.observed_time = observation.time, observation.observed_time
        record.pose = observation.pose.to_dict()
        record.visible_objects = list(observation.visible_objects)
        record.object_cells = {name: list(cell) for name, cell in observation.object_cells.items()}
        record.visible_caption = observation.caption
        record.image_path = observation.image_path
        record.seen_cells = [list(cell) for cell in observation.seen_cells]
        record.seen_walls = [list(cell) for cell in observation.seen_walls]
        record.room = room_entered(observation, shared["rooms_entered"])
        record.model_calls.extend(map(ModelCall.from_dict, observation.model_calls))
        record.errors.extend(observation.errors)
        record.lap("perception")
        return "default"


def room_entered(observation: Observation, entered: list[str]) -> str | None:
    """The room the agent stands in (None where there is none), added to `entered`, the rooms it has stood
    in, the first time."""
    room = observation.rooms.room.name if observation.rooms and observation.rooms.room else None
    if room and room not in entered:
        entered.append(room)
    return room
