"""Reading structured answers out of model replies: one reader for decisions and vision.

Models answer in every shape: a fenced block with prose around it, bare
YAML, JSON (which YAML reads), reasoning in <think> tags, tab indentation,
`backticked` values. All of it is read here, always with a safe loader.
"""

from __future__ import annotations

import re

import yaml

MAX_REPLY_CHARS = 20_000  # read no further: an answer is a few lines
_FENCE = re.compile(r"```[ \t]*[\w-]*[ \t]*\n(.*?)```", re.DOTALL)
_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.DOTALL | re.IGNORECASE)
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)
_BACKTICKED_VALUE = re.compile(r"^([ \t]*\w+[ \t]*:[ \t]*)`([^`\n]*)`[ \t]*$", re.MULTILINE)


class ReplyError(ValueError):
    """The reply holds nothing usable; the message says why."""


def read_structured(text, usable, unfenced_block=None):
    """The first YAML value in the reply that `usable(value)` accepts, or None.

    A fenced block is read if there is one; otherwise the whole text, then
    the block `unfenced_block(text)` cuts out of it (prose dropped). Raises
    ReplyError when a candidate is not valid YAML and none was usable.
    """
    text = _REASONING.sub("", (text or "")[:MAX_REPLY_CHARS])
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else [text, unfenced_block(text) if unfenced_block else ""]
    error = None
    for candidate in filter(None, candidates):
        try:
            loaded = yaml.safe_load(_tidy(candidate))
        except yaml.YAMLError as exc:
            error = exc
            continue
        if usable(loaded):
            return loaded
    if error is not None:
        raise ReplyError(f"the reply is not valid YAML ({str(error).strip().splitlines()[0]})")
    return None


def _tidy(text):
    """What models write that YAML refuses: tab indentation, `backticked` values."""
    text = _LEADING_TABS.sub(lambda tabs: "  " * len(tabs.group()), text)
    return _BACKTICKED_VALUE.sub(r"\1\2", text)
