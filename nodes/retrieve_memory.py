from __future__ import annotations

from pocketflow import Node

from nodes.interfaces import Memory
from nodes.state import AgentState

TOP_K = 3


class RetrieveMemoryNode(Node):
    """Recall the private memories closest to where the agent is and what it sees now."""

    def prep(self, shared: AgentState) -> tuple[str, Memory]:
        seen = shared["visible_caption"] or ", ".join(shared["visible_objects"])
        query = f"What do I know about position {shared['position']} with what I see: {seen}?"
        return query, shared["memory_index"]

    def exec(self, prep_res: tuple[str, Memory]) -> list[tuple[str, float]]:
        query, memory = prep_res
        return memory.search(query, top_k=TOP_K)

    def post(self, shared: AgentState, prep_res: tuple[str, Memory], memories: list[tuple[str, float]]) -> str:
        shared["retrieved_memories"] = memories
        record = shared["step_record"]
        record.memory_query = prep_res[0]
        record.retrieved_memories = [[text, round(d, 4)] for text, d in memories]
        record.lap("retrieve_memory")
        return "default"
