from pocketflow import Flow

from nodes.communication import CommunicationNode
from nodes.decision import DecisionNode
from nodes.end import EndNode
from nodes.execution import ExecutionNode
from nodes.perception_node import PerceptionNode
from nodes.retrieve_memory import RetrieveMemoryNode
from nodes.update_memory import UpdateMemoryNode


def build_agent_flow():
    """One agent's loop: Perception -> ... -> UpdateMemory, then continue or end."""
    perception = PerceptionNode()
    update_memory = UpdateMemoryNode()
    perception >> RetrieveMemoryNode() >> CommunicationNode() >> DecisionNode() >> ExecutionNode() >> update_memory
    update_memory - "continue" >> perception
    update_memory - "end" >> EndNode()
    return Flow(start=perception)
