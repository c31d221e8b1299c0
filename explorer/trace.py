"""The run's record on disk: one JSON line per agent-step, flushed as each step ends."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

# Fields that vary from run to run even with the same seed.
TIMING_FIELDS = ("timings",)


class TraceWriter:
    def __init__(self, path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file = open(self.path, "a", encoding="utf-8")

    def write(self, record):
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self):
        with self._lock:
            self._file.close()


def read_trace(path):
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def write_json(path, data):
    """Write whole or not at all: a reader never sees half a file."""
    path = Path(path)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(partial, path)
