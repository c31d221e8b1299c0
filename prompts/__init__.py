"""Prompt templates, kept as files so they can be read and edited as text."""

from functools import cache
from pathlib import Path
from string import Template

_HERE = Path(__file__).parent


@cache
def _template(name):
    return Template((_HERE / f"{name}.md").read_text(encoding="utf-8"))


def render(name, **fields):
    """Fill `prompts/<name>.md`; every `$field` in it must be given."""
    return _template(name).substitute(fields)
