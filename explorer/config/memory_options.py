"""The memory's options: the embedding backend, where its export is kept, and a memory to start from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from explorer.config.options import PATH, OneOf, option
from explorer.records.errors import ConfigError
from memory.embedder import BACKENDS
from memory.onnx_export import CACHE_ENV


@dataclass(frozen=True)
class MemoryOptions:
    """How each agent's memory embeds, and what it starts with."""

    resume_memory: Path | None = field(
        default=None,
        metadata=option(
            "--resume-memory",
            "start each agent with the memory it saved in an earlier run",
            type=Path,
            metavar="RUN_DIR",
            record=PATH,
        ),
    )
    embedder: str = field(
        default="onnx",
        metadata=option(
            "--embedder",
            "onnx (default): ONNX Runtime on a one-time export, quick to start; torch: sentence-transformers",
            group="embedding",
            check=OneOf(BACKENDS, in_parser=True),
        ),
    )
    embedder_cache: Path | None = field(
        default=None,
        metadata=option(
            "--embedder-cache",
            f"where the ONNX export is kept (default ${CACHE_ENV}, else ~/.cache/multi-agent-explorer)",
            type=Path,
            metavar="DIR",
            group="embedding",
            record=PATH,
        ),
    )

    def check(self) -> None:
        """The memory to resume is there; a cache path can be a folder (said now, not when the model loads)."""
        if self.resume_memory is not None and not self.resume_memory.is_dir():
            raise ConfigError(f"--resume-memory: no such directory: {self.resume_memory}")
        if self.embedder_cache is not None:
            existing = next(p for p in (self.embedder_cache, *self.embedder_cache.parents) if p.exists())
            if not existing.is_dir():
                raise ConfigError(f"--embedder-cache {self.embedder_cache}: {existing} is a file, not a folder")
