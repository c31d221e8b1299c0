"""Where a bench writes its figures (`--out`), checked before it runs, and how: a bench runs for minutes to
hours, and a file it cannot write at the end would lose them all. Every bench writes its whole figures file
through `write_figures`, compact, led by the command it was run with, so that the file says how to make it
again; nothing else writes one."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

COMPACT = (",", ":")


def figures_path(text: str) -> Path:
    """An argparse type: the path of a file (not a folder) in a folder that is there."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; name a file")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: there is no folder {path.parent}")
    return path


def figures_text(figures: dict[str, Any]) -> str:
    """A figures file's text: compact JSON, one top-level key a line and, in a list of rows, one row a line,
    so that a change to a figure is a change to one line."""

    def value(item: Any) -> str:
        if isinstance(item, list) and item and all(isinstance(row, dict) for row in item):
            return "[\n" + ",\n".join(compact(row) for row in item) + "\n]"
        return compact(item)

    return "{\n" + ",\n".join(f"{json.dumps(key)}:{value(item)}" for key, item in figures.items()) + "\n}\n"


def compact(item: Any) -> str:
    return json.dumps(item, separators=COMPACT)


def write_figures(path: Path, figures: dict[str, Any]) -> None:
    """Write a bench's whole figures file, its first key the command that made it (`command_line`), unless
    the figures name one of their own (a summary worked out again keeps the command of the runs it read)."""
    path.write_text(figures_text({"command": command_line(), **figures}))


def command_line(script: str | None = None) -> str:
    """The command this bench was run with, for its figures file: `python bench/NAME.py ARGUMENTS` (the
    script running, unless named)."""
    return shlex.join(["python", f"bench/{script or Path(sys.argv[0]).name}", *sys.argv[1:]])


def plotly_fallback() -> str:
    """The <script> elements of a bench's plot: the one copy of plotly.js beside it, else plotly's CDN."""
    from plotly.offline import get_plotlyjs_version  # imported by the benches that plot, and only then

    from explorer.report.page import SHARED_PLOTLY

    cdn = f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"
    return (
        f'<script src="{SHARED_PLOTLY}"></script>\n'
        f"<script>window.Plotly || document.write('<script src=\"{cdn}\"><\\/script>')</script>"
    )


def write_plot(path: Path, title: str, body: str, command: str) -> None:
    """A bench's plot page: `body` (plotly's divs) and the command that measured its figures. It loads
    plotly.js from one shared copy (explorer/report/page.py's SHARED_PLOTLY), written beside it and not
    committed (.gitignore): the page opens offline where a bench or its `--replot` has run, and takes
    plotly from its CDN in a fresh checkout. No page carries its own 4.8 MB copy."""
    from explorer.records.trace import write_text
    from explorer.report.page import write_shared_plotly

    write_shared_plotly(path.parent)
    write_text(
        path,
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>\n{plotly_fallback()}\n'
        f"</head>\n<body>\n{body}\n<p>{command}</p>\n</body></html>\n",
    )
