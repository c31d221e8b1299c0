"""Prompt templates, kept as files so they can be read and edited as text.

Every prompt is laid out for reuse: first what is the same for every agent all run (the rules, the actions,
how to reply), then what the whole team shares at the moment (what it has found), then what is the same for
one agent (who it is), and from its `## Step` heading on what changes each step. A server that keeps the state
of the prompt before (llama.cpp's prefix reuse, vLLM's prefix cache, the hosted providers' prompt caches) then
evaluates only the part that changed (docs/models.md).
"""

from functools import cache
from pathlib import Path
from string import Template

_HERE = Path(__file__).parent
JSON, YAML = "json", "yaml"  # the reply syntaxes a prompt can ask for
_HOW = {JSON: "with one JSON object", YAML: "with YAML only, in one fenced block"}
# Where a decision's or a coordinator's prompt starts to change during a run: the team's finds, or the step.
VARYING_HEADINGS = ("\n## Found by the team so far", "\n## Step ")
# What a prompt says of its own after that: who the agent is; how to reply, where an older prompt had it last.
_OWN_HEADINGS = ("\n## You\n", "\n## Your reply")


@cache
def _template(name):
    return Template((_HERE / f"{name}.md").read_text(encoding="utf-8"))


def render(name, **fields):
    """Fill `prompts/<name>.md`; every `$field` in it must be given."""
    return _template(name).substitute(fields)


def how_to_reply(syntax: str) -> str:
    """How a prompt asks for its reply in `syntax` (JSON or YAML): "with one JSON object"."""
    return _HOW[syntax]


def syntax_of(prompt: str) -> str:
    """The reply syntax `prompt` asks for: JSON where it asks for a JSON object, else YAML (as older prompts did)."""
    return JSON if f"Reply {_HOW[JSON]}" in prompt or f"Reply again {_HOW[JSON]}" in prompt else YAML


def split_shared(prompt: str) -> tuple[str, str]:
    """(the part of `prompt` that is the same all run, the rest): split where the team's finds or the step
    begin; a prompt with neither (a vision prompt) is all of the first part."""
    at = min((found for heading in VARYING_HEADINGS if (found := prompt.find(heading)) >= 0), default=len(prompt))
    return prompt[:at], prompt[at:]


def instruction_text(prompt: str) -> str:
    """What `prompt` says of its own, as against what it reports: the part that is the same all run, who the
    agent is, and a reply section after the step's part, where older prompts had theirs."""
    shared, varying = split_shared(prompt)
    return shared + "".join(_section(varying, heading) for heading in _OWN_HEADINGS)


def _section(text: str, heading: str) -> str:
    """The section of `text` that `heading` opens, to the next heading; "" where there is none."""
    start = text.find(heading)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]
