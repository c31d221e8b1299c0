"""A self-contained HTML page from a template file: the only module that imports jinja2.

Templates live beside this file (`templates/*.html.j2`) and are autoescaped.
Every page carries what it needs (plotly's script, the styles), so it opens
offline, by double-click, and fetches nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

from explorer.report.charts import plotly_script

TEMPLATES = Path(__file__).with_name("templates")


def render(template, **context) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    return environment.get_template(template).render(plotly_script=plotly_script(), **context)


def write_page(path, template, **context):
    """Render and write at once: a page is whole, or the old one stays."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(render(template, **context), encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
