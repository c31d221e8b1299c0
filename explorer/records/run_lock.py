"""A run directory in use: its run holds a lock on it from before its trace is opened until its summary is
written, so a run still going is told from one that ended (or was killed) before its files are read as a
whole run's.

The lock is an exclusive flock on the directory itself: nothing is added to the directory, and the kernel
lets go of it when the run's process ends, however it ends, so a killed run is one to recover. Where there
is no flock (Windows), no directory is ever seen as in use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if sys.platform != "win32":
    import fcntl


class RunLock:
    """The lock on a run directory, held until `release`."""

    def __init__(self, descriptor: int | None) -> None:
        self._descriptor = descriptor  # None where the platform has no flock

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None


def hold_run_dir(run_dir: Path) -> RunLock:
    """The lock on `run_dir`, for its run: taken at once, or once a reader checking it lets go (a moment).
    OSError where the directory cannot be opened."""
    lock = _flock(run_dir, wait=True)
    assert lock is not None  # a lock waited for is taken
    return lock


def run_in_use(run_dir: Path) -> bool:
    """True while a run holds `run_dir`; False where none does, or the path is no directory that can be opened."""
    try:
        lock = _flock(run_dir, wait=False)
    except OSError:
        return False
    if lock is None:
        return True
    lock.release()
    return False


def _flock(run_dir: Path, wait: bool) -> RunLock | None:
    """The lock on `run_dir`, taken; None if another holds it and not `wait`."""
    if sys.platform == "win32":
        return RunLock(None)
    descriptor = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return RunLock(descriptor) if locked(descriptor, wait) else None


def locked(descriptor: int, wait: bool = False) -> bool:
    """Whether the exclusive flock on `descriptor` was taken; where it was not, or failing, the descriptor is
    closed (a lock another process holds is False unless `wait`)."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(descriptor)
        return False
    except BaseException:
        os.close(descriptor)
        raise
    return True
