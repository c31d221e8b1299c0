"""The run's record on disk: one JSON line per agent-step, flushed as each step ends."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path

from perception.files import replace_whole

# Fields that vary from run to run even with the same seed.
TIMING_FIELDS = ("timings",)
# The longest line the trace's readers take (explorer/records/run_files.py); a step's line takes tens of KB, and
# what a policy or a failure puts in it is bounded far below this (nodes/record.py's TEXT_KEPT_CHARS and the rest).
MAX_LINE_BYTES = 8_000_000
# A model call's recorded error kind when the run's budget stopped it before any request.
BUDGET = "budget"


class DiskWriteError(RuntimeError):
    """A file of the run could not be written (a full disk, say); the message is one line."""


def _disk_error(path: str | Path, error: OSError) -> DiskWriteError:
    return DiskWriteError(f"cannot write {path}: {error.strerror or error}")


class TraceWriter:
    """Appends whole lines only: a line the disk had no room for is cut back off, so every line stays JSON."""

    def __init__(self, path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            # Unbuffered: what reached the file is known, and nothing is left to flush later.
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            raise _disk_error(self.path, error) from None

    def write(self, record):
        """Append `record` as one line; DiskWriteError where the disk refuses it, or it is longer than its readers
        take (nothing is written then)."""
        line = memoryview((json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8"))
        if len(line) > MAX_LINE_BYTES:
            raise DiskWriteError(
                f"cannot write {self.path}: a line of {len(line):,} bytes, over the {MAX_LINE_BYTES:,} a trace's "
                "readers take"
            )
        with self._lock:
            end = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                while line:
                    line = line[os.write(self._fd, line) :]
            except OSError as error:
                with contextlib.suppress(OSError):  # a disk that refuses even this: the error says what happened
                    os.ftruncate(self._fd, end)
                raise _disk_error(self.path, error) from None

    def close(self):
        with self._lock:
            os.close(self._fd)


def write_json(path, data):
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_text(path: str | Path, text: str) -> None:
    write_file(path, lambda file: file.write(text.encode("utf-8")))


def write_file(path, write):
    """Write whole or not at all, `write(file)` filling it: a reader never sees half a file, and a link
    planted in the directory is never written through; DiskWriteError if the disk refuses."""
    try:
        replace_whole(path, write)
    except OSError as error:
        raise _disk_error(path, error) from None
