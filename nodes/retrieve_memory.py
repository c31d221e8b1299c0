from pocketflow import Node

TOP_K = 3


class RetrieveMemoryNode(Node):
    """Recall the private memories closest to what the agent sees now (spec 7b)."""

    def prep(self, shared):
        seen = shared["visible_caption"] or ", ".join(shared["visible_objects"])
        query = f"What do I know about position {shared['position']} with what I see: {seen}?"
        return query, shared["memory_index"]

    def exec(self, prep_res):
        query, memory = prep_res
        return memory.search(query, top_k=TOP_K)

    def post(self, shared, prep_res, memories):
        shared["retrieved_memories"] = memories
        record = shared["step_record"]
        record.memory_query = prep_res[0]
        record.retrieved_memories = [[text, round(d, 4)] for text, d in memories]
        record.lap("retrieve_memory")
        return "default"
