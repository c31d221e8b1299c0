from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nodes.decision_context import HeardMessage, said_by
from nodes.framework import Node
from nodes.interfaces import Memory
from nodes.state import AgentState
from perception.base import objects_text

if TYPE_CHECKING:
    from memory.embedder import PendingRows

# What a memory keeps of the messages read that step, in characters: with 32 agents they ran
# past the model's 256 tokens, and every token is paid for in embedding time, each step.
# The messages themselves are in that step's prompt and trace; finds are in the team's store.
CONTEXT_CHARS = 240


class UpdateMemoryNode(Node):
    """Make the step's memory (where it was, what it saw and did, and why): its text, added to the
    private index when the team commits the step, so that a step is in both the trace and the
    memory, or in neither. Its embedding is only started here: it is encoded while the step is
    committed and the next one perceives, and the next search waits for it; for a policy that
    reads no memories it waits to be encoded in a batch (docs/internals.md, "When a memory is
    searchable")."""

    def prep(self, shared: AgentState) -> tuple[str, Memory, bool]:
        observation = shared["observation"]
        assert observation is not None, "a step's memory is made once it has looked"
        text = (
            f"At position {shared['position']}, "
            f"I saw {objects_text(shared['visible_objects'], observation.object_cells) or 'nothing notable'}. "
            f"I decided to {shared['action']}. "
            f"Reason: {shared['action_reason']}"
        )
        if shared["other_agent_messages"]:
            text += f" | Context from others: {context_from(shared['other_agent_messages'])}"
        return text, shared["memory_index"], shared["policy"].reads_memories

    def exec(self, prep_res: tuple[str, Memory, bool]) -> PendingRows:
        text, memory, searched_soon = prep_res
        return memory.embed_later(text, searched_soon)

    def post(self, shared: AgentState, prep_res: tuple[str, Memory, bool], embedding: PendingRows) -> str:
        text, _, _ = prep_res
        shared["memory_entry"] = (text, embedding)
        record = shared["step_record"]
        record.memory_text = text
        record.lap("update_memory")
        return "default"


def context_from(messages: Sequence[HeardMessage]) -> str:
    """The messages in the order read, as many as fit in CONTEXT_CHARS, and how many more there were."""
    parts: list[str] = []
    length = 0
    for message in messages:
        sender = message["sender"]
        part = said_by(sender, message["message"], CONTEXT_CHARS - len(f'{sender}: ""'))  # quotes closed
        if parts and length + len(part) > CONTEXT_CHARS:
            break
        parts.append(part)
        length += len(part) + 2
    more = len(messages) - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more else "")
