"""What a model call spent, as counted: the server's token counts where they can be true, else an estimate.

A server's usage is not taken on trust: a count that is negative, zero for a
prompt or a reply that has text (litellm's reading of no usage at all), a
tenth of the text's length in tokens or less, or beyond any model's context
would lift --max-tokens and --max-cost, or trip them for nothing. Such a call is counted by an estimate from the prompt's and
the reply's lengths instead, never as zero, so that a budget still trips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4  # of English text, as OpenAI's rule of thumb has it
IMAGE_TOKENS = 765  # an image in a prompt, as OpenAI counts a 512x512 one in detail
MOST_TOKENS = 10_000_000  # in one call: more than any model's context window holds
FEWEST_SHARE = 10  # a count of a tenth of the estimate or less is none: no tokenizer packs text so tightly
SHOWN_CHARS = 24  # of each doubtful count, in the log


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    doubted: str | None = None  # the server's counts not taken ("prompt_tokens -5"); None: all were


def counted_usage(
    prompt_tokens: object, completion_tokens: object, messages: Sequence[Mapping[str, Any]], reply: str
) -> Usage:
    """The server's counts where both can be true; else both estimated, saying which were not."""
    estimated = Usage(_prompt_estimate(messages), _tokens(len(reply)))
    reported = {
        "prompt_tokens": (prompt_tokens, estimated.prompt_tokens),
        "completion_tokens": (completion_tokens, estimated.completion_tokens),
    }
    doubted = [
        f"{name} {str(count)[:SHOWN_CHARS]}"
        for name, (count, estimate) in reported.items()
        if not _possible(count, estimate)
    ]
    if doubted:
        return Usage(estimated.prompt_tokens, estimated.completion_tokens, ", ".join(doubted))
    assert isinstance(prompt_tokens, int) and isinstance(completion_tokens, int)
    return Usage(prompt_tokens, completion_tokens)


def _possible(count: object, estimate: int) -> bool:
    return type(count) is int and estimate // FEWEST_SHARE < count <= MOST_TOKENS


def _prompt_estimate(messages: Sequence[Mapping[str, Any]]) -> int:
    """The prompt's tokens by its length: its text, and a fixed count per image."""
    chars = images = 0
    for message in messages:
        content = message.get("content")
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else content or ():
            if part.get("type") == "image_url":
                images += 1
            else:
                chars += len(str(part.get("text") or ""))
    return _tokens(chars) + images * IMAGE_TOKENS


def _tokens(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))
