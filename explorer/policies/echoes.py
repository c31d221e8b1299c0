"""A reply's free text that gives back the prompt's own instructions: left out, and said to be.

Small models copy what a prompt shows them: a field's description ("your message, in your own words"), the
persona, an example sentence. Sent to the team, such a message is noise that wakes teammates up; kept in a
memory or exported as training data, it teaches the copying. A message or a reason is such an echo where at
least half of its words lie in runs of ECHO_RUN words in a row that the prompt's instructions hold too
(prompts.instruction_text: the part of a prompt it says of its own, not what it reports), counted by words
and numbers, without case or punctuation ("your_message", the head of a field's description written as a name,
is two words). A text of fewer than ECHO_FEWEST words is never one: "all", "G2".
"""

from __future__ import annotations

import re
from dataclasses import replace

from nodes.interfaces import Decision
from perception.base import BROADCAST

ECHO_RUN = 4  # words in a row; a text shorter than this is compared whole
ECHO_FEWEST = 2  # words: one says too little to be told from an echo
ECHO_SHARE = 0.5  # of a text's words, in runs the instructions hold
ECHOED_FIELDS = ("message_to_others", "reason")  # a decision's free texts, as its reply names them


def repeats_instructions(text: str, instructions: str) -> bool:
    """Whether `text` gives back `instructions` (the module's rule)."""
    said = _words(text)
    if len(said) < ECHO_FEWEST:
        return False
    run = min(ECHO_RUN, len(said))
    held = set(_runs(_words(instructions), run))
    covered: set[int] = set()
    for start, words in enumerate(_runs(said, run)):
        if words in held:
            covered.update(range(start, start + run))
    return len(covered) >= ECHO_SHARE * len(said)


def without_echoes(decision: Decision, instructions: str) -> tuple[Decision, tuple[str, ...]]:
    """(the decision with each free text that gives back `instructions` left out, the names of those fields);
    a message left out goes to no one in particular."""
    echoed = tuple(name for name in ECHOED_FIELDS if repeats_instructions(getattr(decision, name), instructions))
    if not echoed:
        return decision, ()
    cleared = replace(decision, **dict.fromkeys(echoed, ""))
    if not cleared.message_to_others:
        cleared = replace(cleared, message_to=BROADCAST)
    return cleared, echoed


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _runs(words: list[str], run: int) -> list[tuple[str, ...]]:
    return [tuple(words[start : start + run]) for start in range(len(words) - run + 1)]
