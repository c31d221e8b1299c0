"""The run directory: created and claimed by one run alone, before anything is written to it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from explorer.records.errors import ConfigError

CLAIM = "config.json"  # created exclusively: the run that creates it owns the directory


def claim_run_dir(wanted=None) -> Path:
    """`wanted` (or a fresh runs/<timestamp>/ under the current directory), created and claimed.

    Two runs started together never share a directory: the default takes the
    next free name, and a given one is refused to the second run. Raises
    ConfigError, one line, when the directory cannot be made or is taken.
    """
    if wanted is not None:
        path = Path(wanted)
        _make(path, exist_ok=True)
    else:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for n in range(1, 10_000):
            path = Path.cwd() / "runs" / (stamp if n == 1 else f"{stamp}-{n}")
            if _make(path, exist_ok=False):
                break
    try:
        (path / CLAIM).open("x").close()
    except FileExistsError:
        raise ConfigError(f"run directory {path} is already used by another run; choose another --run-dir") from None
    except OSError as error:
        raise ConfigError(f"cannot write in the run directory {path}: {error.strerror or error}") from None
    return path


def _make(path, exist_ok):
    """True if `path` is now a directory (made here, or already there when `exist_ok`); False if taken."""
    try:
        path.mkdir(parents=True, exist_ok=exist_ok)
    except FileExistsError:
        if exist_ok:  # mkdir says so when the path is a file
            raise ConfigError(f"the run directory {path} is a file; choose another --run-dir") from None
        return False
    except OSError as error:
        raise ConfigError(f"cannot create the run directory {path}: {error.strerror or error}") from None
    return True
