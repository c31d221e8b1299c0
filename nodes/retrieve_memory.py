from __future__ import annotations

from nodes.framework import Node
from nodes.interfaces import Memory
from nodes.state import AgentState

TOP_K = 3


class RetrieveMemoryNode(Node):
    """Recall the private memories closest to where the agent is and what it sees now; for a policy
    that reads no memories, nothing: no query is embedded and nothing searched (its trace line's
    `memory_query` is empty)."""

    def prep(self, shared: AgentState) -> tuple[str | None, Memory]:
        if not shared["policy"].reads_memories:
            return None, shared["memory_index"]
        seen = shared["visible_caption"] or ", ".join(shared["visible_objects"])
        query = f"What do I know about position {shared['position']} with what I see: {seen}?"
        return query, shared["memory_index"]

    def exec(self, prep_res: tuple[str | None, Memory]) -> list[tuple[str, float]]:
        query, memory = prep_res
        return memory.search(query, top_k=TOP_K) if query is not None else []

    def post(self, shared: AgentState, prep_res: tuple[str | None, Memory], memories: list[tuple[str, float]]) -> str:
        shared["retrieved_memories"] = memories
        record = shared["step_record"]
        record.memory_query = prep_res[0] or ""
        record.retrieved_memories = [[text, round(d, 4)] for text, d in memories]
        record.lap("retrieve_memory")
        return "default"
