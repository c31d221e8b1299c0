from __future__ import annotations

from nodes.communication import CommunicationNode
from nodes.decision import DecisionNode
from nodes.end import EndNode
from nodes.execution import ExecutionNode
from nodes.framework import Flow
from nodes.hand_in import HandInNode
from nodes.perception_node import PerceptionNode
from nodes.retrieve_memory import RetrieveMemoryNode
from nodes.update_memory import UpdateMemoryNode


def build_agent_flow() -> Flow:
    """One agent's loop: Perception -> ... -> UpdateMemory -> HandIn, then continue or end."""
    perception = PerceptionNode()
    hand_in = HandInNode()
    (
        perception
        >> RetrieveMemoryNode()
        >> CommunicationNode()
        >> DecisionNode()
        >> ExecutionNode()
        >> UpdateMemoryNode()
        >> hand_in
    )
    hand_in - "continue" >> perception
    hand_in - "end" >> EndNode()
    return Flow(start=perception)
