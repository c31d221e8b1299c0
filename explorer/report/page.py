"""An HTML page from a template file: the only module that imports jinja2.

Templates live beside this file (`templates/*.html.j2`) and are autoescaped.
A page carries what it needs (the styles, and plotly's script), so it opens
offline, by double-click, and fetches nothing. In a sweep's directory, where
plotly's script would be the bulk of every page, the sweep's pages and its
runs' load one shared copy of it, `plotly.min.js`, by a relative path.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from explorer.records.trace import write_text
from explorer.report.charts import plotly_script

TEMPLATES = Path(__file__).with_name("templates")
SHARED_PLOTLY = "plotly.min.js"  # in a sweep's directory: the one copy its pages load


def render(template: str, plotly: str, **context: object) -> str:
    """The template filled in; `plotly` is the <script> element that gives the page plotly."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment.get_template(template).render(plotly=plotly, **context)


def write_page(path: Path, template: str, **context: object) -> None:
    """Render and write at once: a page is whole, or the old one stays."""
    write_text(path, render(template, _plotly_element(Path(path)), **context))


def write_shared_plotly(directory: Path) -> None:
    """plotly's script in a sweep's directory, for the pages there and in its runs' directories to load."""
    script = plotly_script()
    path = directory / SHARED_PLOTLY
    if not _holds(path, script):
        write_text(path, script)


def _plotly_element(page: Path) -> str:
    """The sweep's shared copy for its page or a run's page in it (when it is this plotly's); else the script."""
    script = plotly_script()
    for relative in (SHARED_PLOTLY, f"../{SHARED_PLOTLY}"):
        if _holds(page.parent / relative, script):
            return f'<script src="{relative}"></script>'
    return f"<script>{script}</script>"


def _holds(path: Path, script: str) -> bool:
    """True for a file that holds `script` (by its size: a file of the same name is not enough)."""
    try:
        return path.is_file() and path.stat().st_size == len(script.encode())
    except OSError:
        return False
