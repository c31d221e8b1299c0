"""The decision contexts (nodes/decision_context.py), read from an agent's state at the start of its decision.

`team_context_of` and `explorer_context` build them from their parts: the state here, and the environments'
episode (explorer/envs/episode.py), which so gives a policy the context a run would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nodes.decision_context import (
    RECENT_ACTIONS,
    ActionTaken,
    AgentSetup,
    CoordinatorContext,
    DecisionContext,
    Discovery,
    HeardMessage,
    TeamContext,
    TeamMap,
    TeammatePoses,
    Teammates,
    View,
)
from nodes.interfaces import TeamView
from nodes.state import AgentState, CoordinatorState
from perception.base import EnvironmentInfo, Observation, PerceptionInterface


def team_context(shared: AgentState | CoordinatorState) -> TeamContext:
    """What every member's decision rests on, an explorer's or a coordinator's: who, when, where."""
    return team_context_of(
        shared["agent_id"],
        shared["team"],
        shared["step_count"],
        shared["max_steps"],
        shared["environment"],
        shared["shared_memory"].discoveries(),
    )


def team_context_of(
    agent_id: str,
    members: Sequence[str],
    step: int,
    max_steps: int,
    env: EnvironmentInfo,
    discoveries: Mapping[str, Discovery],
) -> TeamContext:
    """The TeamContext of `agent_id` at `step`, given the team's finds (name -> {finder, step, cell}, in
    discovery order)."""
    return TeamContext(
        agent_id=agent_id,
        members=tuple(members),
        step=step,
        max_steps=max_steps,
        world=env.name,
        size=env.size,
        view_distance=env.view_distance,
        discoveries=discoveries,
        targets=env.targets,
    )


def decision_context(shared: AgentState) -> DecisionContext:
    """Everything an explorer's decision rests on; the prompt and the built-in policies both read it."""
    observation = shared["observation"]
    assert observation is not None, "the Perception node looks before the Decision node decides"
    return explorer_context(
        team_context(shared),
        AgentSetup(shared["role"], shared["persona"], shared["comm_enabled"], shared["coordinator"]),
        observation,
        shared["shared_memory"],
        shared["perception"],
        dead_reckoned=shared["environment"].dead_reckoned,
        rooms_entered=shared["rooms_entered"],
        messages=shared["other_agent_messages"],
        memories=shared["retrieved_memories"],
        history=shared["action_history"],
    )


def explorer_context(
    team: TeamContext,
    setup: AgentSetup,
    observation: Observation,
    store: TeamView,
    perception: PerceptionInterface,
    *,
    dead_reckoned: bool,
    rooms_entered: Sequence[str],
    messages: Sequence[HeardMessage],
    memories: Sequence[tuple[str, float]],
    history: Sequence[ActionTaken],
    team_map: TeamMap | None = None,
) -> DecisionContext:
    """An explorer's DecisionContext from its parts: its view, the teammates' poses in `store`, its actions;
    the team's map is the store's unless `team_map` gives it as it was."""
    agent_id = team.agent_id
    positions = store.positions()
    return DecisionContext(
        team=team,
        setup=setup,
        view=View(
            pose=observation.pose,
            dead_reckoned=dead_reckoned,
            visible_objects=tuple(observation.visible_objects),
            object_cells=dict(observation.object_cells),
            caption=observation.caption,
            seen_cells=observation.seen_cells,
            seen_walls=observation.seen_walls,
            actions_unseen=tuple(observation.actions_unseen),
            rooms=observation.rooms,
            rooms_entered=tuple(rooms_entered),
        ),
        teammates=Teammates(
            messages=tuple(messages),
            positions=TeammatePoses({a: p for a, p in positions.items() if a != agent_id}),
            team_map=team_map or store,
        ),
        memories=tuple(memories),
        recent_actions=tuple(history[-RECENT_ACTIONS:]),
        available_actions=tuple(perception.available_actions(agent_id)),
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
