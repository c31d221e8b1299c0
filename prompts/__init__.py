"""Prompt templates, kept as files so they can be read and edited as text."""

import re
from functools import cache
from pathlib import Path
from string import Template

_HERE = Path(__file__).parent
_EXAMPLE_VALUE = re.compile(r'^(\w+): "([^"]*)"$', re.MULTILINE)


@cache
def _template(name):
    return Template((_HERE / f"{name}.md").read_text(encoding="utf-8"))


def render(name, **fields):
    """Fill `prompts/<name>.md`; every `$field` in it must be given."""
    return _template(name).substitute(fields)


@cache
def example_values(name):
    """The quoted values the reply template `prompts/<name>.md` shows for its fields (`reason: "why this
    action"`): a reply that gives one back has said nothing in that field."""
    return frozenset(value for _, value in _EXAMPLE_VALUE.findall(_template(name).template))
