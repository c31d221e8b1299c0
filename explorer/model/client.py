"""The model client: every request to a language model goes through here; the only module that imports litellm.

litellm is imported on first use, after the settings that stop it from
fetching a price map or reading .env files at import. litellm keeps global
state, so each call passes all of its settings. The SDK's own retries are
off: this module retries rate limits, server errors, timeouts and lost
connections itself, with backoff, so they are counted and bounded.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import random
import re
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field, replace
from types import ModuleType, TracebackType
from typing import Any, NamedTuple, Protocol

from explorer.model.budget import Budget
from explorer.model.deadline import Abandoned, within_deadline
from explorer.model.reply_format import JSON, YAML, Constrained, NoSchemaAccepted, ReplyFormat
from explorer.model.schemas import JsonSchema
from explorer.model.usage import Usage, counted_usage
from explorer.records.secrets import redact
from explorer.records.trace import BUDGET
from nodes.interfaces import StopRun
from nodes.record import REPLY_KEPT_CHARS, ModelCall, excerpt
from prompts import split_shared

log = logging.getLogger("explorer")

BACKOFF_BASE = 0.5  # seconds: the first retry waits up to this (full jitter), doubling each time
BACKOFF_CAP = 8.0
RETRY_AFTER_CAP = 30.0  # a server's Retry-After is honoured up to this
RETRYABLE = frozenset({"rate_limit", "server", "timeout", "connection"})
BAD_REPLY_RETRIES = 1  # a reply with no text is asked again once; the same prompt tends to fail the same way
MESSAGE_LIMIT = 400
RAW_REPLY_LIMIT = 200
_LITELLM_PREFIX = re.compile(r"^litellm\.\w+:\s*(?:\w+Error:\s*)?")
_TRACEBACK = re.compile(r"\s*Traceback \(most recent call last\):.*", re.DOTALL)  # litellm puts some in its messages


@dataclass(frozen=True)
class LLMSettings:
    model: str
    api_base: str | None = None
    temperature: float = 0.2
    timeout: float = 60.0  # seconds per attempt
    max_tokens: int = 600
    max_retries: int = 4  # retries after the first attempt, for retryable failures only
    price_in: float | None = None  # dollars per million prompt tokens, for models litellm has no price for
    price_out: float | None = None  # dollars per million completion tokens
    # The run's CallGate, shared by its calls (--max-concurrency, and stopping); None: no bound.
    gate: CallGate | None = field(default=None, compare=False, repr=False)
    # What answers the calls instead of the model: an earlier run's recorded replies
    # (explorer/model/replay.py, --replay-replies); None: the model.
    replay: RecordedAnswers | None = field(default=None, compare=False, repr=False)
    # The agent's reply format (--reply-format): the dialect of its requests under a JSON schema.
    reply_format: ReplyFormat = field(default_factory=lambda: ReplyFormat(YAML, ""), compare=False, repr=False)


ChatMessage = dict[str, Any]  # one message of an OpenAI chat: {"role", "content"}


class RecordedAnswers(Protocol):
    """What answers a run's model calls instead of the model (explorer/model/replay.py's RecordedReplies)."""

    def answer(self, settings: LLMSettings, messages: list[ChatMessage]) -> Reply:
        """The recorded reply to this call; raises the recorded failure as LLMError, or StopRun."""
        ...

    def syntax(self) -> str:
        """The reply syntax the next recorded call's prompt asked for (prompts.JSON or YAML)."""
        ...


class CallGate:
    """What a run's model calls share: a bound on those in flight, a switch that abandons them all, and
    the run's budgets.

    Used as a context manager around one request. Once `cancel()` is called
    (the run is stopping), every call waiting on a reply gives up at once
    instead of holding the run for up to --timeout.
    """

    def __init__(self, max_in_flight: int, budget: Budget | None = None) -> None:
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self.cancelled = threading.Event()
        self.budget = budget  # the run's budgets (--max-cost, --max-calls, --max-tokens), where it has any
        self._told: set[tuple[str, str]] = set()  # what the run's log has said once: (what, model)
        self._told_lock = threading.Lock()

    def cancel(self) -> None:
        self.cancelled.set()

    def first_time(self, what: str, model: str) -> bool:
        """True the first time the run's calls meet `what` of `model`: the log says it once."""
        with self._told_lock:
            told = (what, model) in self._told
            self._told.add((what, model))
        return not told

    def __enter__(self) -> CallGate:
        self._slots.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._slots.release()


@dataclass(frozen=True)
class Reply:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0  # seconds, the whole call with its retries and waits
    retries: int = 0
    cost_usd: float | None = None  # None when unknown
    replayed: bool = False  # recorded in an earlier run (--replay-replies): no request was made
    format: str = YAML  # what the request asked the reply to be: "json" under a schema, else "yaml"
    off_schema: bool = False  # under --reply-format json, not an instance of the schema it was asked under
    recorded_cost_usd: float | None = None  # a replayed call's cost in the recorded run, for the budgets
    dialect: str | None = None  # how the schema was sent (explorer/model/dialects.py); None: no schema
    finish_reason: str | None = None  # why the server stopped: "stop", "length", ...; None: it did not say

    def record(self, purpose: str, reply_error: str | None = None) -> ModelCall:
        """What the trace keeps of the call: the reply (bounded, with its length; none if it has no
        text), `reply_error` when it could not be read, and what it cost."""
        return ModelCall(
            purpose,
            self.model,
            self.format,
            reply=excerpt(self.text, REPLY_KEPT_CHARS) if self.text else None,
            chars=len(self.text) if self.text else None,
            reply_error=reply_error,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            latency=self.latency,
            retries=self.retries,
            cost_usd=self.cost_usd,
            replayed=self.replayed,
            dialect=self.dialect,
            finish_reason=self.finish_reason,
        )


class LLMError(RuntimeError):
    """A model call failed. `kind` says how; the message is one line with secrets redacted."""

    def __init__(
        self,
        message: str,
        kind: str,
        status: int | None = None,
        retries: int = 0,
        model: str | None = None,
        latency: float = 0.0,
        reply: Reply | None = None,
        format: str = YAML,
    ) -> None:
        super().__init__(_clean(message))
        self.kind = kind
        self.status = status
        self.retries = retries
        self.model = model  # None: no request was made
        self.latency = latency
        self.reply = reply  # a reply that came but could not be used (replayed: the recorded call)
        self.format = format  # what the request asked the reply to be, as Reply.format

    def record(self, purpose: str) -> ModelCall | None:
        """What the trace keeps of the failed call, as of a Reply's, with its `error` kind and message;
        None if no request was made."""
        if self.reply is None and self.model is None:
            return None
        reply = self.reply or Reply(
            "", self.model or "", latency=self.latency, retries=self.retries, format=self.format
        )
        return replace(reply.record(purpose), error=self.kind, error_message=str(self))


class AuthenticationFailed(LLMError):
    """The provider refused the credentials (or there are none): retrying cannot help, so the run stops."""

    def __init__(self, message: str, status: int | None = None, retries: int = 0) -> None:
        super().__init__(message, "auth", status, retries)

    def stop_run(self) -> StopRun:
        """The error that stops the run, as the nodes know it."""
        return StopRun(f"the model provider refused the credentials: {self}", users_mistake=True)


class _Failure(NamedTuple):
    """One failed attempt, classified; `detail` is already redacted."""

    kind: str
    status: int | None
    detail: str
    retry_after: float | None = None


def load() -> None:
    """Import litellm now, in this thread, before the agents' threads would import it side by side."""
    _litellm()


def _litellm() -> ModuleType:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    # requests silences this urllib3 warning when it is imported, but the embedding model's thread
    # may import urllib3's SOCKS module first: the warning would reach the console.
    warnings.filterwarnings("ignore", message="SOCKS support in urllib3 requires")
    import litellm

    # A server's usage that is not whole numbers makes pydantic warn, on stderr, at every call: the call
    # fails, and says so in one line (see _unreadable_usage).
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    # Otherwise litellm prints a "Give Feedback" banner to stdout on every error, through the live view.
    litellm.suppress_debug_info = True
    # What litellm's first request imports (about a second here): imported now, so that the first
    # request's --timeout, which bounds the whole request, is not spent on imports.
    for module in _FIRST_REQUEST_IMPORTS:
        with suppress(ImportError):  # another litellm version: its first request is slower, nothing more
            importlib.import_module(module)
    return litellm


_FIRST_REQUEST_IMPORTS = ("openai.resources", "litellm.proxy.openai_files_endpoints.common_utils")


def _clean(text: object) -> str:
    """One redacted line, cut short, without the traceback litellm puts in some messages. Redacted before
    cutting, so no key survives in part."""
    line = " ".join(redact(_TRACEBACK.sub("", str(text))).split())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 3] + "..."


# ---- chat ------------------------------------------------------------------------------------


def complete(
    settings: LLMSettings,
    messages: list[ChatMessage],
    schema: JsonSchema | None = None,
    sleep: Callable[[float], object] | None = None,
) -> Reply:
    """One chat completion (OpenAI message list), retried on rate limits, server errors, timeouts
    and lost connections; raises LLMError (AuthenticationFailed for refused credentials)."""
    if settings.replay is not None:  # the recorded reply, or failure, stands for the model's: no request
        return _replayed(settings, messages)
    litellm = _litellm()
    budget = settings.gate.budget if settings.gate else None
    rng = random.Random()  # per call: threads share no random state
    start = time.perf_counter()
    retries = bad_replies = 0
    cancelled = settings.gate.cancelled if settings.gate else threading.Event()
    while True:
        constrained = settings.reply_format.constrained(schema, "reply") if schema else None
        asked = JSON if constrained else YAML
        if budget and not budget.admit():
            raise _budget_spent(settings.model, budget, retries, round(time.perf_counter() - start, 4), asked)
        response_format = constrained.response_format if constrained else None
        attempt = _counted_attempt(litellm, settings, messages, cancelled, response_format)
        if not isinstance(attempt, _Failure):
            break
        failure = attempt
        if constrained and _refuses_format(settings, constrained.dialect, failure):
            if budget:  # a few per agent at most, and no replay makes them: the budget counts calls answered
                budget.give_back()
            _format_refused(settings, constrained.dialect, failure)
            continue  # the same call, in the next dialect or without a schema
        if budget:
            budget.charge(0, None)  # a request made, and failed: it counts as one
        bad_replies += failure.kind == "bad_response"
        if retries >= settings.max_retries or not _retryable(failure.kind, bad_replies):
            raise _error(failure, settings.model, retries, round(time.perf_counter() - start, 4), asked)
        delay = _backoff(retries, rng, failure.retry_after)
        log.info(
            "%s: %s; retry %d of %d in %.1f s", settings.model, failure.detail, retries + 1, settings.max_retries, delay
        )
        (sleep or cancelled.wait)(delay)  # a stopping run does not wait out a backoff
        retries += 1
        if cancelled.is_set():
            raise _error(_CANCELLED, settings.model, retries, round(time.perf_counter() - start, 4), asked)
    reply = _reply(litellm, settings, messages, attempt, constrained, retries, start)
    if budget:
        budget.charge(reply.prompt_tokens + reply.completion_tokens, reply.cost_usd)
    return reply


def _reply(
    litellm: ModuleType,
    settings: LLMSettings,
    messages: list[ChatMessage],
    answered: tuple[Any, str],
    constrained: Constrained | None,
    retries: int,
    start: float,
) -> Reply:
    """The Reply of an `answered` request, (its response, its text): what it cost, and how it was asked."""
    response, text = answered
    usage = _usage(settings, response, messages, text)
    return Reply(
        text=redact(text),
        model=settings.model,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        latency=round(time.perf_counter() - start, 4),
        retries=retries,
        cost_usd=_cost(litellm, response, settings, usage),
        format=JSON if constrained else YAML,
        off_schema=not settings.reply_format.answered(constrained, text),
        dialect=constrained.dialect if constrained else None,
        finish_reason=_finish_reason(response),
    )


def _counted_attempt(
    litellm: ModuleType,
    settings: LLMSettings,
    messages: list[ChatMessage],
    cancelled: threading.Event,
    response_format: dict[str, object] | None,
) -> tuple[Any, str] | _Failure:
    """One attempt, within the gate (held for the request only, not for the backoff); one that raises
    what no failure is (a fault of litellm's) still counts against the budget, as the request it was."""
    try:
        with settings.gate or nullcontext():
            return _attempt(litellm, settings, messages, cancelled, response_format)
    except BaseException:
        if settings.gate and settings.gate.budget:
            settings.gate.budget.charge(0, None)
        raise


def _usage(settings: LLMSettings, response: Any, messages: list[ChatMessage], text: str) -> Usage:
    """What the call spent: the server's counts, or an estimate where they cannot be true (the run's log
    says so once per model; a call outside a run, such as the model check, is counted nowhere)."""
    reported = getattr(response, "usage", None)
    usage = counted_usage(
        getattr(reported, "prompt_tokens", None), getattr(reported, "completion_tokens", None), messages, text
    )
    if usage.doubted and settings.gate and settings.gate.first_time("usage", settings.model):
        log.warning(
            "%s reported token usage it cannot have spent (%s): its calls are counted by an estimate from the "
            "prompt's and the reply's lengths",
            settings.model,
            usage.doubted,
        )
    return usage


def _replayed(settings: LLMSettings, messages: list[ChatMessage]) -> Reply:
    """The recorded answer to the call, counted against the budgets as the recorded call was (a recorded
    budget refusal is raised again as it was): a replay stops where the recorded run did."""
    assert settings.replay is not None
    budget = settings.gate.budget if settings.gate else None
    try:
        reply = settings.replay.answer(settings, messages)
    except LLMError as failure:
        if budget and failure.model is not None:  # its attempts, the one a budget stopped not among them
            budget.charge(0, None, requests=failure.retries + (failure.kind != BUDGET))
        raise
    if budget:
        tokens = reply.prompt_tokens + reply.completion_tokens
        budget.charge(tokens, reply.recorded_cost_usd, requests=reply.retries + 1)
    return reply


def _budget_spent(model: str, budget: Budget, retries: int, latency: float, asked: str) -> LLMError:
    """The error of a call the run's budget stopped before its request; recorded in the trace (with no
    reply and no tokens), so that a replay of the run refuses it too."""
    message = f"{model}: the run's --{budget.refusing().replace('_', '-')} budget is spent: no further request"
    return LLMError(message, BUDGET, retries=retries, model=model, latency=latency, format=asked)


def complete_prompt(
    settings: LLMSettings,
    prompt: str,
    schema: JsonSchema | None = None,
    sleep: Callable[[float], object] | None = None,
) -> Reply:
    """One user message, one reply; under `schema` where the agent's reply format has a dialect for it."""
    return complete(settings, [{"role": "user", "content": prompt}], schema, sleep=sleep)


def _refuses_format(settings: LLMSettings, dialect: str, failure: _Failure) -> bool:
    """A 400 or 422 naming the dialect's parameter (litellm reports some servers' 422 as a 500)."""
    return failure.kind in ("bad_request", "server") and settings.reply_format.refuses(dialect, failure.detail)


def _format_refused(settings: LLMSettings, dialect: str, failure: _Failure) -> None:
    try:
        settings.reply_format.refused(dialect, failure.detail)
    except NoSchemaAccepted as refused:
        raise StopRun(str(refused), users_mistake=True) from None


def _attempt(
    litellm: ModuleType,
    settings: LLMSettings,
    messages: list[ChatMessage],
    cancelled: threading.Event,
    response_format: dict[str, object] | None = None,
) -> tuple[Any, str] | _Failure:
    """(response, text), or the failure. The failure is built outside the except block, so
    nothing raised later carries litellm's exception, whose text may hold the key."""
    failures: tuple[type[BaseException], ...] = (*_api_errors(litellm), TimeoutError)
    try:
        # The HTTP client's own timeout bounds each read, not the call: a server that trickles a byte at a
        # time would hold it for ever.
        response = within_deadline(
            lambda: litellm.completion(**_request(settings, messages, response_format)),
            settings.timeout,
            cancelled,
            "model-call",
        )
    except failures as error:
        failure = _classify(error)
    except Abandoned:
        failure = _CANCELLED
    else:
        text = _reply_text(response)
        if text is not None:
            return response, text
        failure = _Failure("bad_response", None, "the reply has no text")
    return failure


_CANCELLED = _Failure("cancelled", None, "the run is stopping: the call was abandoned")


def _request(
    settings: LLMSettings, messages: list[ChatMessage], response_format: dict[str, object] | None = None
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": settings.model,
        "messages": _cache_marked(settings.model, messages),
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "timeout": settings.timeout,
        "max_retries": 0,  # the SDK retries twice by default; we retry ourselves
        "drop_params": True,  # reasoning models refuse a temperature; litellm then leaves it out
    }
    if response_format is not None:
        request["response_format"] = response_format
    if settings.api_base:
        request["api_base"] = settings.api_base
        # Local OpenAI-compatible servers need some key; they ignore its value.
        if settings.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            request["api_key"] = "not-needed"
    return request


def _cache_marked(model: str, messages: list[ChatMessage]) -> list[ChatMessage]:
    """The messages with Anthropic's prompt-cache marker (`cache_control`) on the part of the last one that
    stays the same from step to step (prompts.split_shared), for a Claude model by any route: Anthropic caches
    a prompt's prefix only where it is told to. Other models' messages go as they are: OpenAI, Gemini, vLLM and
    llama.cpp reuse a prefix they have seen without being told."""
    if "claude" not in model.lower() or not messages:
        return messages
    *earlier, last = messages
    content = last["content"]
    if isinstance(content, str):
        shared, varying = split_shared(content)
        parts: list[dict[str, Any]] = [{"type": "text", "text": text} for text in (shared, varying) if text]
    else:
        parts = [dict(part) for part in content]
    first_text = next((at for at, part in enumerate(parts) if part.get("type") == "text"), None)
    if first_text is not None:
        parts[first_text]["cache_control"] = {"type": "ephemeral"}
    return [*earlier, {**last, "content": parts}]


def reply_syntax(settings: LLMSettings) -> str:
    """The syntax an agent's next prompt asks its reply in: JSON while its requests go under a schema, else
    YAML; in a replay, the syntax of the recorded prompt it stands for."""
    return settings.replay.syntax() if settings.replay is not None else settings.reply_format.syntax()


def _api_errors(litellm: ModuleType) -> tuple[type[BaseException], ...]:
    import openai

    return (openai.OpenAIError, *litellm.LITELLM_EXCEPTION_TYPES)


def _reply_text(response: Any) -> str | None:
    """The first choice's text, or None when there is none (no choices, no content, only blanks)."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    return content if isinstance(content, str) and content.strip() else None


def _finish_reason(response: Any) -> str | None:
    """Why the server stopped the first choice ("stop", "length", ...); None where it did not say."""
    choices = getattr(response, "choices", None) or []
    reason = getattr(choices[0], "finish_reason", None) if choices else None
    return reason if isinstance(reason, str) and reason else None


def _retryable(kind: str, bad_replies: int) -> bool:
    return kind in RETRYABLE or (kind == "bad_response" and bad_replies <= BAD_REPLY_RETRIES)


def _backoff(retries: int, rng: random.Random, retry_after: float | None) -> float:
    """Seconds to wait before retry number `retries` + 1: the server's word if it gave one, else full jitter."""
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP)
    return rng.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**retries))


def _error(failure: _Failure, model: str, retries: int, latency: float, asked: str) -> LLMError:
    status = f" (HTTP {failure.status})" if failure.status else ""
    tried = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
    message = f"{model}: {failure.kind} error{status}{tried}: {failure.detail}"
    if failure.kind == "auth":
        return AuthenticationFailed(message, failure.status, retries)
    return LLMError(message, failure.kind, failure.status, retries, model, latency, format=asked)


# ---- classifying failures ----------------------------------------------------------------------


def _classify(error: BaseException) -> _Failure:
    """What went wrong. litellm reports a refused connection or an unreadable body as a 500,
    so the causes it wraps are looked at before the status code."""
    unreadable = _unreadable_usage(_causes(error))
    if unreadable:
        return _Failure("bad_response", None, unreadable)
    detail = _clean(_LITELLM_PREFIX.sub("", getattr(error, "message", None) or str(error)))
    kind = _kind_from_causes(_causes(error))
    if kind:
        return _Failure(kind, None, detail)
    status = getattr(error, "status_code", None)
    kind = _kind_from_status(status) if isinstance(status, int) else _kind_from_type(error)
    return _Failure(kind, status if isinstance(status, int) else None, detail, _retry_after(error))


def _causes(error: BaseException | None) -> list[BaseException]:
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def _unreadable_usage(chain: list[BaseException]) -> str | None:
    """What was wrong where litellm refused a reply for its usage ("abc", 1.5: not whole numbers), or None.
    The reply is lost with it: litellm keeps no text of a response it could not read."""
    for error in chain:
        problems = getattr(error, "errors", None)  # pydantic's ValidationError, which litellm does not wrap
        if type(error).__name__ == "ValidationError" and getattr(error, "title", None) == "Usage" and problems:
            given = [f"{'.'.join(map(str, e['loc']))} {_clean(e.get('input'))[:24]!r}" for e in problems()]
            return f"the reply's token usage is not whole numbers ({', '.join(given)})"
    return None


def _kind_from_causes(chain: list[BaseException]) -> str | None:
    import openai

    if any(isinstance(e, (openai.APITimeoutError, TimeoutError)) for e in chain):
        return "timeout"
    if any(isinstance(e, (openai.APIConnectionError, ConnectionError)) for e in chain):
        return "connection"
    if any(isinstance(e, json.JSONDecodeError) for e in chain):
        return "bad_response"
    # The OpenAI client itself raises its bare base class when it has no key to send.
    if any(type(e) is openai.OpenAIError for e in chain):
        return "auth"
    return None


def _kind_from_status(status: int) -> str:
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limit"
    if 400 <= status < 500:
        return "bad_request"
    return "server"


def _kind_from_type(error: BaseException) -> str:
    import openai

    if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return "auth"
    if isinstance(error, openai.NotFoundError):
        return "not_found"
    if isinstance(error, openai.RateLimitError):
        return "rate_limit"
    if isinstance(error, (openai.BadRequestError, openai.UnprocessableEntityError)):
        return "bad_request"
    return "server"


def _retry_after(error: BaseException) -> float | None:
    """Seconds the server asked us to wait (Retry-After or OpenAI's retry-after-ms), if it said."""
    headers = getattr(error, "litellm_response_headers", None) or {}
    for name, seconds_per_unit in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        given: Any = headers.get(name)
        try:
            value = float(given) * seconds_per_unit
        except (TypeError, ValueError):  # absent, or an HTTP date
            continue
        if value >= 0:
            return value
    return None


# ---- cost ---------------------------------------------------------------------------------------


def _cost(litellm: ModuleType, response: Any, settings: LLMSettings, usage: Usage) -> float | None:
    """litellm's price for the model if it has one, else the settings' prices, else None; of the usage
    as counted (an estimate is priced as such, not the server's counts)."""
    try:
        if usage.doubted is None:
            return litellm.completion_cost(completion_response=response)
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=settings.model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
        )
        return prompt_cost + completion_cost
    except Exception as error:  # unknown models raise; a price is never worth failing a call for
        log.debug("%s: litellm has no price: %s", settings.model, _clean(error))
    if settings.price_in is None and settings.price_out is None:
        return None
    prompt_price, completion_price = settings.price_in or 0.0, settings.price_out or 0.0
    return (usage.prompt_tokens * prompt_price + usage.completion_tokens * completion_price) / 1e6


# ---- models -------------------------------------------------------------------------------------


def missing_api_keys(model: str) -> list[str]:
    """The API key variables `model`'s provider needs and the environment lacks, as litellm's provider
    table says (no network); [] when one is set, or when the provider may find credentials elsewhere."""
    try:
        found = _litellm().validate_environment(model=model)
    except Exception:  # a provider litellm cannot check: the first call will say
        return []
    missing = found.get("missing_keys") or []
    if found.get("keys_in_environment") or not all(name.endswith("API_KEY") for name in missing):
        return []  # e.g. Ollama's optional base URL, or AWS credentials that may come from a profile
    return missing


def sees_images(model: str) -> bool | None:
    """True or False as litellm's model table says; None for a model it does not know."""
    return _model_table_says(model, "supports_vision")


def takes_response_schema(model: str) -> bool | None:
    """Whether `model` accepts a JSON schema as its response_format, as litellm's model table says;
    None for a model it does not know (a local server's, say)."""
    return _model_table_says(model, "supports_response_schema")


def has_price(model: str) -> bool:
    """Whether litellm's model table prices `model`'s tokens (a local server's model it does not)."""
    entry = _model_entry(model)
    return entry is not None and entry.get("input_cost_per_token") is not None


def _model_table_says(model: str, key: str) -> bool | None:
    entry = _model_entry(model)
    return None if entry is None else bool(entry.get(key))


def _model_entry(model: str) -> dict[str, Any] | None:
    # Only the local table is read: get_model_info would ask an Ollama server, for one.
    table = _litellm().model_cost
    name = model.split("/", 1)[1] if "/" in model else model
    return table.get(model) or table.get(name)
