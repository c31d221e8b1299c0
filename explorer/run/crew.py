"""What each member of the team this process runs starts with: its state (nodes/state.py) and its flow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from explorer.config.profiles import Profile
from explorer.config.run_config import COORDINATOR, RunConfig
from explorer.model.client import CallGate
from explorer.policies.directed import DirectedPolicy
from explorer.policies.factory import make_coordinator
from explorer.run.roster import Roster
from explorer.run.workers import Work, flow_work
from explorer.run.world import World
from memory.vector_memory import VectorMemory
from nodes.coordinator import build_coordinator_flow
from nodes.flow import build_agent_flow
from nodes.interfaces import DecisionPolicy, Schedule
from nodes.state import AgentState, CoordinatorState, new_agent_state, new_coordinator_state

PolicyFactory = Callable[[Profile, str, RunConfig, CallGate], DecisionPolicy]  # (profile, agent_id, config, gate)


@dataclass(frozen=True)
class Crew:
    """The local members, ready to be given their flows once the world and the schedule are there."""

    config: RunConfig
    roster: Roster
    steps: int
    memories: dict[str, VectorMemory]  # each local explorer's
    policy_factory: PolicyFactory

    def workers(self, world: World, schedule: Schedule) -> list[tuple[str, Work]]:
        """(name, work) for each local member: its flow on its state, explorers first, in order."""
        workers = [
            (agent_id, flow_work(build_agent_flow, self._agent_state(agent_id, world, schedule)))
            for agent_id in self.roster.local_ids
        ]
        coordinator = self.roster.coordinator
        if COORDINATOR in self.roster.local and coordinator:
            state = self._coordinator_state(coordinator, world, schedule)
            workers.append((COORDINATOR, flow_work(build_coordinator_flow, state)))
        return workers

    def _agent_state(self, agent_id: str, world: World, schedule: Schedule) -> AgentState:
        profile = self.roster.members[agent_id]
        return new_agent_state(
            agent_id=agent_id,
            team=list(self.roster.agent_ids),
            shared_memory=world.store,
            perception=world.perception,
            environment=world.environment,
            role=profile.role,
            persona=profile.persona_text(),
            policy=self._directed(self.policy_factory(profile, agent_id, self.config, world.gate)),
            schedule=schedule,
            comm_enabled=self.config.comm,
            coordinator=self.roster.coordinator_id,
            max_steps=self.steps,
            memory_index=self.memories[agent_id],
        )

    def _directed(self, policy: DecisionPolicy) -> DecisionPolicy:
        """Under a coordinator, an explorer's own choice gives way to the directives it receives."""
        return DirectedPolicy(policy, COORDINATOR) if self.roster.coordinator else policy

    def _coordinator_state(self, profile: Profile, world: World, schedule: Schedule) -> CoordinatorState:
        return new_coordinator_state(
            agent_id=COORDINATOR,
            team=list(self.roster.agent_ids),
            shared_memory=world.store,
            environment=world.environment,
            available_actions=list(world.perception.available_actions(self.roster.agent_ids[0])),
            policy=make_coordinator(profile, self.config, world.gate),
            schedule=schedule,
            max_steps=self.steps,
        )
