"""A self-contained HTML page from a template file: the only module that imports jinja2.

Templates live beside this file (`templates/*.html.j2`) and are autoescaped.
Every page carries what it needs (plotly's script, the styles), so it opens
offline, by double-click, and fetches nothing.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from explorer.report.charts import plotly_script
from explorer.run.trace import write_text

TEMPLATES = Path(__file__).with_name("templates")


def render(template, **context) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment.get_template(template).render(plotly_script=plotly_script(), **context)


def write_page(path, template, **context):
    """Render and write at once: a page is whole, or the old one stays."""
    write_text(path, render(template, **context))
