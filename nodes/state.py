"""The per-agent state: PocketFlow's shared dict for one agent, with the original specification's key names.

Every key is listed here, with who writes it and who reads it; `docs/design.md`
has the same table. The flow reads and writes nothing else.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, TypedDict

from nodes.decision_context import ActionTaken, Directive, HeardMessage, SightReport
from nodes.interfaces import CoordinatorPolicy, DecisionPolicy, Memory, ReportInbox, Schedule, TeamView
from nodes.record import StepRecord
from perception.base import (
    BROADCAST,
    ActionResult,
    EnvironmentInfo,
    Message,
    Observation,
    PerceptionInterface,
)

if TYPE_CHECKING:
    from memory.embedder import PendingRows


class AgentState(TypedDict):
    # Given at the start, never changed.
    agent_id: str
    team: list[str]  # every agent id, in agent order
    shared_memory: TeamView  # the team's store, read during a step
    perception: PerceptionInterface
    environment: EnvironmentInfo
    role: str
    persona: str
    policy: DecisionPolicy
    schedule: Schedule
    comm_enabled: bool
    coordinator: str | None  # the coordinator's id, where there is one: directives come from it, reports go to it
    messages_up: bool  # --comm star or tree: its messages go only up, in its report to its coordinator
    max_steps: int
    memory_index: Memory  # the private FAISS index and its texts (memory/vector_memory.py)
    # The run's slots on the cores, held while a policy that only computes decides (nodes/decision.py);
    # None for one that may wait (on a model, say), which holds none.
    cpu_slots: threading.BoundedSemaphore | None
    # Written by PerceptionNode.
    step_count: int  # steps started
    observation: Observation | None
    position: str  # the pose as text
    visible_objects: list[str]
    visible_caption: str
    rooms_entered: list[str]  # the rooms it has stood in, by name, in the order first entered
    step_record: StepRecord  # this step's trace line, each node filling its part
    # Written by RetrieveMemoryNode.
    retrieved_memories: list[tuple[str, float]]
    # Written by CommunicationNode.
    other_agent_messages: list[HeardMessage]
    # Written by DecisionNode.
    action: str | None
    action_reason: str
    message_to_others: str
    message_to: str  # a teammate's id or "all"
    # Written by ExecutionNode.
    action_result: ActionResult | None
    action_history: list[ActionTaken]
    # Written by UpdateMemoryNode.
    memory_entry: (
        tuple[str, PendingRows] | None
    )  # the step's memory text and its embedding (pending), added at the commit


def new_agent_state(
    *,
    agent_id: str,
    team: list[str],
    shared_memory: TeamView,
    perception: PerceptionInterface,
    environment: EnvironmentInfo,
    role: str,
    persona: str,
    policy: DecisionPolicy,
    schedule: Schedule,
    comm_enabled: bool,
    coordinator: str | None,
    max_steps: int,
    memory_index: Memory,
    messages_up: bool = False,
    cpu_slots: threading.BoundedSemaphore | None = None,
) -> AgentState:
    """The state an agent starts with: what the application gives it, and an empty step."""
    return AgentState(
        agent_id=agent_id,
        team=team,
        shared_memory=shared_memory,
        perception=perception,
        environment=environment,
        role=role,
        persona=persona,
        policy=policy,
        schedule=schedule,
        comm_enabled=comm_enabled,
        coordinator=coordinator,
        messages_up=messages_up,
        max_steps=max_steps,
        memory_index=memory_index,
        cpu_slots=cpu_slots,
        step_count=0,
        observation=None,
        position="",
        visible_objects=[],
        visible_caption="",
        rooms_entered=[],
        step_record=StepRecord(agent_id, 1),
        retrieved_memories=[],
        other_agent_messages=[],
        action=None,
        action_reason="",
        message_to_others="",
        message_to=BROADCAST,
        action_result=None,
        action_history=[],
        memory_entry=None,
    )


class CoordinatorState(TypedDict):
    """The coordinator's shared dict: it neither sees nor moves; it reads the explorers' reports and directs them."""

    # Given at the start, never changed.
    agent_id: str
    team: list[str]  # the explorers it directs, in agent order
    shared_memory: ReportInbox  # the team's store: its reports in, the team's finds
    environment: EnvironmentInfo
    available_actions: list[str]  # what an explorer can be told to do
    policy: CoordinatorPolicy
    schedule: Schedule
    max_steps: int
    # Written by ReviewNode.
    step_count: int  # ticks started
    reports: list[SightReport]  # the explorers' reports that reached it since its last tick
    messages: list[HeardMessage]  # its mail since its last tick (under a system agent)
    step_record: StepRecord
    # Written by DirectNode.
    directives: list[Directive]
    relayed: list[Message]  # the messages it passes on (--comm star and tree)


def new_coordinator_state(
    *,
    agent_id: str,
    team: list[str],
    shared_memory: ReportInbox,
    environment: EnvironmentInfo,
    available_actions: list[str],
    policy: CoordinatorPolicy,
    schedule: Schedule,
    max_steps: int,
) -> CoordinatorState:
    """The state the coordinator starts with: what the application gives it, and an empty tick."""
    return CoordinatorState(
        agent_id=agent_id,
        team=team,
        shared_memory=shared_memory,
        environment=environment,
        available_actions=available_actions,
        policy=policy,
        schedule=schedule,
        max_steps=max_steps,
        step_count=0,
        reports=[],
        messages=[],
        step_record=StepRecord(agent_id, 1),
        directives=[],
        relayed=[],
    )
