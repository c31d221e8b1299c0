"""What each member of the team this process runs starts with: its state (nodes/state.py) and its flow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from explorer.config.profiles import Profile
from explorer.config.run_config import RunConfig
from explorer.model.client import CallGate
from explorer.policies.built_in import takes_cpu_slot
from explorer.policies.coordinator import Post, take_post
from explorer.policies.directed import DirectedPolicy
from explorer.policies.system_agent import SystemAgent
from explorer.run.policy_factory import make_coordinator
from explorer.run.roster import Roster
from explorer.run.shared_world import SharedWorld
from explorer.run.workers import Work, flow_work
from explorer.team.hierarchy import initial_groups
from memory.vector_memory import VectorMemory
from nodes.coordinator import build_coordinator_flow
from nodes.flow import build_agent_flow
from nodes.interfaces import CoordinatorPolicy, DecisionPolicy, Schedule
from nodes.state import AgentState, CoordinatorState, new_agent_state, new_coordinator_state

PolicyFactory = Callable[[Profile, str, RunConfig, CallGate], DecisionPolicy]  # (profile, agent_id, config, gate)
NUMBERS_PER_DIRECTOR = 1_000_000  # each coordinator numbers its directives from its own million up


@dataclass(frozen=True)
class Crew:
    """The local members, ready to be given their flows once the world and the schedule are there."""

    config: RunConfig
    roster: Roster
    steps: int
    memories: dict[str, VectorMemory]  # each local explorer's
    policy_factory: PolicyFactory

    def workers(self, world: SharedWorld, schedule: Schedule) -> list[tuple[str, Work]]:
        """(name, work) for each local member: its flow on its state, explorers first, in order."""
        workers = [
            (agent_id, flow_work(build_agent_flow, self._agent_state(agent_id, world, schedule)))
            for agent_id in self.roster.local_ids
        ]
        for director in self.roster.coordinator_ids + ([self.roster.system] if self.roster.system else []):
            if director in self.roster.local:
                state = self._coordinator_state(director, world, schedule)
                workers.append((director, flow_work(build_coordinator_flow, state)))
        return workers

    def _agent_state(self, agent_id: str, world: SharedWorld, schedule: Schedule) -> AgentState:
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
            comm_enabled=self.config.team.topology.messages,
            coordinator=self._groups().get(agent_id),
            max_steps=self.steps,
            memory_index=self.memories[agent_id],
            messages_up=self.config.team.topology.through_directors,
            cpu_slots=world.cpu_slots if takes_cpu_slot(profile.model) else None,
        )

    def _groups(self) -> dict[str, str]:
        """{explorer: the coordinator it starts under}."""
        return initial_groups(self.roster.agent_ids, self.roster.coordinator_ids) if self.roster.coordinator else {}

    def _directed(self, policy: DecisionPolicy) -> DecisionPolicy:
        """Under a coordinator, an explorer's own choice gives way to the directives it receives; under a
        system agent, from any coordinator, the system agent's first."""
        roster = self.roster
        if not roster.coordinator:
            return policy
        above = [roster.system] if roster.system else []
        return DirectedPolicy(policy, roster.coordinator_ids[0], above, roster.coordinator_ids)

    def _coordinator_state(self, director: str, world: SharedWorld, schedule: Schedule) -> CoordinatorState:
        return new_coordinator_state(
            agent_id=director,
            team=list(self.roster.agent_ids),
            shared_memory=world.store,
            environment=world.environment,
            available_actions=list(world.perception.available_actions(self.roster.agent_ids[0])),
            policy=self._director_policy(director, world),
            schedule=schedule,
            max_steps=self.steps,
        )

    def _director_policy(self, director: str, world: SharedWorld) -> CoordinatorPolicy:
        """The system agent's, or a coordinator's at its post: its group, and whether it passes messages on."""
        roster, topology = self.roster, self.config.team.topology
        if director == roster.system:
            return SystemAgent(director, roster.coordinator_ids, self._groups(), topology.system_agent)
        profile = roster.members[director]
        groups = self._groups()
        post = Post(
            members=tuple(e for e, c in groups.items() if c == director) if roster.system else None,
            relaying=topology.through_directors,
            system=roster.system if topology.system_agent else None,
            first_number=roster.coordinator_ids.index(director) * NUMBERS_PER_DIRECTOR,
        )
        return take_post(make_coordinator(profile, self.config, world.gate), post)
