"""The decision contexts (nodes/decision_context.py), read from an agent's state at the start of its decision."""

from __future__ import annotations

from nodes.decision_context import (
    RECENT_ACTIONS,
    AgentSetup,
    CoordinatorContext,
    DecisionContext,
    TeamContext,
    Teammates,
    View,
)
from nodes.state import AgentState, CoordinatorState
from perception.base import Pose


def team_context(shared: AgentState | CoordinatorState) -> TeamContext:
    """What every member's decision rests on, an explorer's or a coordinator's: who, when, where."""
    env = shared["environment"]
    return TeamContext(
        agent_id=shared["agent_id"],
        members=tuple(shared["team"]),
        step=shared["step_count"],
        max_steps=shared["max_steps"],
        world=env.name,
        size=env.size,
        view_distance=env.view_distance,
        discoveries=shared["shared_memory"].discoveries(),  # name -> {finder, step, cell}, in discovery order
        targets=env.targets,
    )


def decision_context(shared: AgentState) -> DecisionContext:
    """Everything an explorer's decision rests on; the prompt and the built-in policies both read it."""
    observation = shared["observation"]
    assert observation is not None, "the Perception node looks before the Decision node decides"
    agent_id = shared["agent_id"]
    team = team_context(shared)
    positions = shared["shared_memory"].positions()
    return DecisionContext(
        team=team,
        setup=AgentSetup(shared["role"], shared["persona"], shared["comm_enabled"], shared["coordinator"]),
        view=View(
            pose=observation.pose,
            dead_reckoned=shared["environment"].dead_reckoned,
            visible_objects=tuple(observation.visible_objects),
            object_cells=dict(observation.object_cells),
            caption=observation.caption,
            seen_cells=observation.seen_cells,
            seen_walls=observation.seen_walls,
            actions_unseen=tuple(observation.actions_unseen),
            rooms=observation.rooms,
            rooms_entered=tuple(shared["rooms_entered"]),
        ),
        teammates=Teammates(
            messages=tuple(shared["other_agent_messages"]),
            positions={a: Pose.from_dict(p) if p else None for a, p in positions.items() if a != agent_id},
        ),
        memories=tuple(shared["retrieved_memories"]),
        recent_actions=tuple(shared["action_history"][-RECENT_ACTIONS:]),
        available_actions=tuple(shared["perception"].available_actions(agent_id)),
    )


def coordinator_context(shared: CoordinatorState) -> CoordinatorContext:
    """What the coordinator's directives rest on this tick."""
    return CoordinatorContext(
        team_context(shared),
        tuple(shared["reports"]),
        tuple(shared["available_actions"]),
        tuple(shared["messages"]),
        {a: p for a, p in shared["shared_memory"].positions().items() if a in shared["team"]},
    )
