"""The per-agent state: PocketFlow's shared dict for one agent, with the spec's section 5 key names.

Every key is listed here, with who writes it and who reads it; `docs/design.md`
has the same table. The flow reads and writes nothing else.
"""

from __future__ import annotations

from typing import TypedDict

from nodes.interfaces import DecisionPolicy, Schedule, TeamView
from nodes.record import StepRecord
from perception.base import (
    BROADCAST,
    ActionResult,
    EnvironmentInfo,
    Observation,
    PerceptionInterface,
)


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
    max_steps: int
    memory_index: object  # memory.vector_memory.VectorMemory: the private FAISS index and its texts
    # Written by PerceptionNode.
    step_count: int  # steps started
    observation: Observation | None
    position: str  # the pose as text
    visible_objects: list[str]
    visible_caption: str
    step_record: StepRecord  # this step's trace line, each node filling its part
    # Written by RetrieveMemoryNode.
    retrieved_memories: list[tuple[str, float]]
    # Written by CommunicationNode.
    other_agent_messages: list[dict]  # {sender, message}
    # Written by DecisionNode.
    action: str | None
    action_reason: str
    message_to_others: str
    message_to: str  # a teammate's id or "all"
    # Written by ExecutionNode.
    action_result: ActionResult | None
    action_history: list[dict]  # {step, action, outcome, detail, message}
    # Written by UpdateMemoryNode.
    memory_entry: tuple[str, object] | None  # the step's memory text and its embedding (pending), added at the commit


GIVEN_KEYS = (
    "agent_id", "team", "shared_memory", "perception", "environment", "role", "persona", "policy", "schedule",
    "comm_enabled", "coordinator", "max_steps", "memory_index",
)


def new_agent_state(**given) -> AgentState:
    """The state an agent starts with: what the application gives it (GIVEN_KEYS), and an empty step."""
    if set(given) != set(GIVEN_KEYS):
        raise TypeError(f"new_agent_state needs exactly {', '.join(GIVEN_KEYS)}")
    return AgentState(
        **given,
        step_count=0,
        observation=None,
        position="",
        visible_objects=[],
        visible_caption="",
        step_record=StepRecord(given["agent_id"], 1),
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
    shared_memory: TeamView  # the team's store: its reports in, the team's finds
    environment: EnvironmentInfo
    available_actions: list[str]  # what an explorer can be told to do
    policy: object  # its direct(prompt, context) -> DecisionOutcome with directives
    schedule: Schedule
    max_steps: int
    # Written by ReviewNode.
    step_count: int  # ticks started
    reports: list  # the explorers' SightReports that reached it since its last tick
    step_record: StepRecord
    # Written by DirectNode.
    directives: list[dict]  # {id, to, kind, target, message}


COORDINATOR_KEYS = ("agent_id", "team", "shared_memory", "environment", "available_actions", "policy", "schedule",
                    "max_steps")


def new_coordinator_state(**given) -> CoordinatorState:
    if set(given) != set(COORDINATOR_KEYS):
        raise TypeError(f"new_coordinator_state needs exactly {', '.join(COORDINATOR_KEYS)}")
    return CoordinatorState(**given, step_count=0, reports=[], step_record=StepRecord(given["agent_id"], 1),
                            directives=[])
