from nodes.base import StepNode

TOP_K = 3


class RetrieveMemoryNode(StepNode):
    """Recall the private memories closest to what the agent sees now (spec 7b)."""

    timing_key = "retrieve_memory"

    def prep(self, shared):
        seen = shared["visible_caption"] or ", ".join(shared["visible_objects"])
        query = f"What do I know about position {shared['position']} with what I see: {seen}?"
        return query, shared["memory"]

    def exec(self, prep_res):
        query, memory = prep_res
        return memory.search(query, top_k=TOP_K)

    def post(self, shared, prep_res, memories):
        shared["retrieved_memories"] = memories
        shared["step_record"]["memory_query"] = prep_res[0]
        shared["step_record"]["retrieved_memories"] = [[text, round(d, 4)] for text, d in memories]
        return "default"
