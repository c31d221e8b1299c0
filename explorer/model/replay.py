"""An earlier run's model replies, answering a new run's calls instead of the model (--replay-replies).

Each agent's calls are answered in the order it made them in the recorded
run, from the record of each call in that run's trace (`llm.calls`): its
reply, what it cost, and how a failed call failed. An older trace is read as
explorer/records/trace_versions.py converts it. Each call is checked first: the
same model, and the recorded step's prompt (a re-prompt after a bad reply must
begin with it; the rest quotes that reply, which is replayed too, so it is the
same). Where the record cannot answer a call exactly, the run stops instead,
naming the agent and the recorded step: a prompt that differs, a call the
recorded run did not make, a reply the trace kept only the start of, and
every vision call (the trace does not keep the screenshot the model saw).
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.model.client import ChatMessage, LLMError, LLMSettings, Reply
from explorer.records.trace_versions import TraceVersionError, current_line
from nodes.interfaces import StopRun
from nodes.record import ModelCall, is_excerpt
from prompts import JSON, syntax_of

SHOWN_CHARS = 60  # of each prompt, from the first difference, in the error


@dataclass(frozen=True)
class _Recorded:
    """One decision call, as the trace recorded it."""

    step: int
    prompt: str  # the step's prompt: its first call sends it as it is, a re-prompt begins with it
    first: bool
    call: ModelCall


class RecordedReplies:
    """One agent's model calls in an earlier run, read from its trace at the first call; `answer` stands
    in for the model."""

    def __init__(self, run_dir: str | Path, agent_id: str) -> None:
        self.run_dir = Path(run_dir)
        self.agent_id = agent_id
        self._lock = threading.Lock()  # each call takes the next recorded one, even were two to overlap
        self._decisions: deque[_Recorded] | None = None  # None: the trace is not read yet
        self._vision_steps: deque[int] = deque()  # the steps of its vision calls
        self._last_step: int | None = None  # the agent's last step in the recorded run

    def answer(self, settings: LLMSettings, messages: list[ChatMessage]) -> Reply:
        """The recorded reply to this call (or its recorded failure, raised as LLMError); StopRun, as the
        user's mistake, when the record cannot answer it."""
        vision = _shows_an_image(messages)
        with self._lock:
            if self._decisions is None:
                self._read()
            queue = self._vision_steps if vision else self._decisions
            if not queue:
                raise self._stop(self._ran_out("a vision call" if vision else "a model call"))
            recorded = queue.popleft()
        if isinstance(recorded, int):  # a vision call: the step it was made at
            raise self._stop(
                f"{self.agent_id}'s vision call at step {recorded} cannot be replayed: "
                "the trace does not keep the screenshot the model saw"
            )
        self._check(settings, messages[-1]["content"], recorded)  # a decision is asked in one message, as text
        return _replayed(recorded.call)

    def syntax(self) -> str:
        """The reply syntax the agent's next recorded call asked for: the live run's prompts asked in the syntax of
        its requests at the time (explorer/model/reply_format.py), which a replay does not learn."""
        with self._lock:
            if self._decisions is None:
                self._read()
            assert self._decisions is not None
            return syntax_of(self._decisions[0].prompt) if self._decisions else JSON

    def _read(self) -> None:
        path = self.run_dir / "trace.jsonl"
        try:
            with open(path, encoding="utf-8") as trace:  # line by line: every agent reads it, keeping its own
                records = map(json.loads, filter(str.strip, trace))
                lines = [current_line(line) for line in records if line["agent_id"] == self.agent_id]
            self._decisions, self._vision_steps = _recorded_calls(lines)
        except OSError as error:
            raise self._stop(f"cannot read {path}: {error.strerror or error}") from None
        except TraceVersionError as error:
            raise self._stop(f"{path}: {error}") from None
        except (ValueError, KeyError, TypeError) as error:
            raise self._stop(f"{path} is not a run's trace: {type(error).__name__}: {error}") from None
        self._last_step = lines[-1]["step"] if lines else None

    def _ran_out(self, call: str) -> str:
        if self._last_step is None:
            return f"{self.agent_id} makes {call}, but the recorded run has no step of {self.agent_id}"
        return f"{self.agent_id} makes {call} the recorded run did not make (its record ends at step {self._last_step})"

    def _check(self, settings: LLMSettings, sent: str, recorded: _Recorded) -> None:
        """Raises StopRun unless the recorded reply is the one the model gave this very call."""
        step, call = recorded.step, recorded.call
        if settings.model != call.model:
            raise self._stop(
                f"{self.agent_id}'s model at step {step} is {settings.model!r}; the recorded run's was {call.model!r}"
            )
        # A re-prompt is the prompt, then what was wrong with the reply (read from the replayed reply).
        expected = recorded.prompt if recorded.first else recorded.prompt + "\n\n"
        sent = sent if recorded.first else sent[: len(expected)]
        if sent != expected:
            at = len(os.path.commonprefix([expected, sent]))  # noqa: RUF071 -- strings: the first differing character
            which = "prompt" if recorded.first else "re-prompt"
            raise self._stop(
                f"{self.agent_id}'s {which} at step {step} differs from the recorded one (first difference at "
                f"character {at}): recorded {expected[at : at + SHOWN_CHARS]!r}, now {sent[at : at + SHOWN_CHARS]!r}"
            )
        if call.reply is not None and call.chars is not None and is_excerpt(call.reply, call.chars):
            raise self._stop(
                f"{self.agent_id}'s reply at step {step} cannot be replayed: "
                f"the trace kept only the start of its {call.chars:,} characters"
            )
        if call.error is not None and call.error_message is None:
            raise self._stop(
                f"{self.agent_id}'s failed call at step {step} cannot be replayed: the trace does not say how it failed"
            )

    def _stop(self, problem: str) -> StopRun:
        return StopRun(f"--replay-replies {self.run_dir}: {problem}", users_mistake=True)


def _recorded_calls(lines: list[dict[str, Any]]) -> tuple[deque[_Recorded], deque[int]]:
    """(the decision calls, the steps of the vision calls) of one agent's trace lines, in the order they were made."""
    decisions: deque[_Recorded] = deque()
    vision_steps: deque[int] = deque()
    for line in lines:
        first = True
        for call in map(ModelCall.from_dict, line["llm"]["calls"]):
            if call.purpose == "vision":
                vision_steps.append(line["step"])
                continue
            decisions.append(_Recorded(line["step"], line["prompt"], first, call))
            first = False
    return decisions, vision_steps


def _replayed(call: ModelCall) -> Reply:
    """The recorded reply, costing nothing and taking no time; or the recorded failure, raised."""
    reply = Reply(
        call.reply or "",
        call.model,
        call.prompt_tokens,
        call.completion_tokens,
        retries=call.retries,
        cost_usd=0.0,
        replayed=True,
        format=call.format,
        recorded_cost_usd=call.cost_usd,
        dialect=call.dialect,  # as recorded: the replay's trace is the recorded run's
        finish_reason=call.finish_reason,
    )
    if call.error is not None:
        raise LLMError(call.error_message or "", call.error, retries=call.retries, model=call.model, reply=reply)
    return reply


def _shows_an_image(messages: list[ChatMessage]) -> bool:
    return any(
        isinstance(message["content"], list) and any(part.get("type") == "image_url" for part in message["content"])
        for message in messages
    )
