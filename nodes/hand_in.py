from __future__ import annotations

from functools import partial

from nodes.framework import Node
from nodes.interfaces import Schedule, SightReport, StepReport
from nodes.record import StepRecord
from nodes.state import AgentState
from perception.base import Message


class HandInNode(Node):
    """Hand the finished step to the team; the schedule says when that is done, and whether to go on."""

    def prep(self, shared: AgentState) -> tuple[Schedule, StepReport]:
        agent_id, step, message = shared["agent_id"], shared["step_count"], shared["message_to_others"]
        observation, result, entry = shared["observation"], shared["action_result"], shared["memory_entry"]
        assert observation is not None and result is not None and entry is not None, (
            "a step is handed in once it has looked, acted and made its memory"
        )
        pose = result.pose.to_dict()
        upward = None
        if shared["coordinator"]:
            upward = SightReport(
                agent_id,
                step,
                observation.pose.to_dict(),
                pose,
                observation.seen_cells,
                observation.seen_walls,
                dict(observation.object_cells),
                message,
            )
        report = StepReport(
            agent_id=agent_id,
            step=step,
            record=shared["step_record"],
            seen_objects=list(shared["visible_objects"]),
            object_cells=dict(observation.object_cells),
            # Under --comm star and tree the message goes only up, in the report to the coordinator.
            outgoing=[Message(agent_id, shared["message_to"], message, step)]
            if message and not shared["messages_up"]
            else [],
            pose=pose,
            remember=partial(shared["memory_index"].add, *entry),
            upward=upward,
            seen_cells=tuple(observation.seen_cells),
            seen_walls=tuple(observation.seen_walls),
        )
        return shared["schedule"], report

    # No exec: handing in waits for the team, a side effect; it happens once, in post.

    def post(self, shared: AgentState, prep_res: tuple[Schedule, StepReport], exec_res: None) -> str:
        schedule, report = prep_res
        if not schedule.hand_in(report):
            return "end"
        shared["step_record"] = StepRecord(report.agent_id, report.step + 1)  # the next step's clock starts now
        return "continue"
