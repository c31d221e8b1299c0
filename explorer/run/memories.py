"""The agents' memories across runs: saved in the run directory, loaded again by --resume-memory."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from explorer.run.recover import rebuild_memories
from memory.embedder import EmbedderError, SentenceEmbedder
from memory.vector_memory import MemoryFileError, VectorMemory

log = logging.getLogger("explorer")
MEMORY_DIR = "memory"  # in the run directory: one folder per agent


@dataclass(frozen=True)
class Resumed:
    """The memories an earlier run (`source`) left, and whether they were rebuilt from its trace."""

    source: Path | None = None
    memories: dict[str, VectorMemory] = field(default_factory=dict)
    rebuilt: bool = False
    skipped: str | None = None  # what rebuilding them skipped of the trace (damaged lines), in a line

    def announce(self, agent_ids: list[str]) -> None:
        """Log what each agent starts with, once the run's log is open."""
        if not self.source:
            return
        for agent_id in agent_ids:
            resumed = self.memories.get(agent_id)
            log.info("%s starts with %d memories from %s", agent_id, len(resumed) if resumed else 0, self.source)
        if self.rebuilt:
            log.warning(
                "%s saved no memories (was it killed?): they were rebuilt from its trace.jsonl, re-embedded",
                self.source,
            )
        if self.skipped:
            log.warning("%s: what they held is not among the memories", self.skipped)


def resume_memories(source: Path | None, agent_ids: list[str], embedder: SentenceEmbedder) -> Resumed:
    """What --resume-memory `source` gives the agents (nothing without it); raises MemoryFileError or ConfigError."""
    if not source:
        return Resumed()
    return load_memories(source, agent_ids, embedder)


def load_memories(run_dir: Path, agent_ids: list[str], embedder: SentenceEmbedder) -> Resumed:
    """The memories saved in an earlier run, or rebuilt from its trace; agents it did not have start empty.
    Raises MemoryFileError, or ConfigError for a trace that cannot be read."""
    saved = run_dir / MEMORY_DIR
    found = {agent_id: saved / agent_id for agent_id in agent_ids if (saved / agent_id / "meta.json").exists()}
    if found:
        return Resumed(run_dir, {agent_id: VectorMemory.load(path, embedder) for agent_id, path in found.items()})
    # A run that was killed saved no memory, but its trace holds every memory text.
    rebuilt, trace = rebuild_memories(run_dir, agent_ids, embedder)
    if not rebuilt:
        raise MemoryFileError(
            f"{run_dir}: no saved memories for {', '.join(agent_ids)} (expected {saved}/<agent>/) and no trace "
            "to rebuild them from; give the directory of an earlier run"
        )
    return Resumed(run_dir, rebuilt, rebuilt=True, skipped=trace.note() if trace else None)


def save_memories(memories: dict[str, VectorMemory], run_dir: Path) -> None:
    """Each agent's memory into <run>/memory/<agent>/, for a later --resume-memory. The first save embeds
    every memory text still held back, all agents' in one gathering (memory/embedder.py)."""
    for agent_id, memory in memories.items():
        try:
            memory.save(run_dir / MEMORY_DIR / agent_id)
        except (MemoryFileError, EmbedderError) as error:
            log.error("%s's memory was not saved: %s", agent_id, error)
