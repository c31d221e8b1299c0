"""Where a bench writes its figures (`--out`), checked before it runs: a bench runs for minutes to hours, and
a file it cannot write at the end would lose them all."""

from __future__ import annotations

import argparse
from pathlib import Path


def figures_path(text: str) -> Path:
    """An argparse type: the path of a file (not a folder) in a folder that is there."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; name a file")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: there is no folder {path.parent}")
    return path
