"""Before the first step: one minimal request per distinct model, so that a server that is not there, a model
it does not know or credentials it refuses end the run at once, in one line, instead of after every step's
retries.

Each request asks for one token, through the model client like every other (explorer/model/client.py),
with no retries and a short deadline; the models are asked side by side. It goes through no CallGate, so
the run's budgets (--max-calls, --max-tokens, --max-cost) never count it, and the trace does not hold it.
Only what every later call would meet refuses the run: a refused connection or unknown host, a model the
server does not know, refused credentials. A slow or busy server (a timeout, a 429 or a 5xx) only gets
a warning: the run's own calls wait and retry, as they always do.
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from explorer.model.client import LLMError, LLMSettings, complete_prompt

log = logging.getLogger("explorer")

PREFLIGHT_SECONDS = 3.0  # each request's deadline; side by side, the whole check takes about as long at most
PREFLIGHT_PROMPT = "Reply with OK."
REFUSING = frozenset({"connection", "not_found", "auth"})  # failures every later call would meet
# A 400 that says the model is unknown (litellm's own, for a name with no provider, among them).
_UNKNOWN_MODEL = re.compile(
    r"(unknown|invalid|unsupported|no such) model|model\b.{0,80}\b(not found|does not exist|not exist|"
    r"is not supported|unknown)|provider not provided",
    re.IGNORECASE,
)


def unreachable(api_base: str, seconds: float = PREFLIGHT_SECONDS) -> str | None:
    """Why the server at `api_base` cannot be reached (a refused connection, an unknown host), or None.

    A plain connection, made before litellm is imported: its import takes seconds, and a server that is
    not there is the commonest mistake, so it is told at once."""
    parts = urlsplit(api_base)
    if not parts.hostname:
        return None  # not a URL this check understands: the model request will say
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=seconds):
            return None
    except (ConnectionRefusedError, socket.gaierror) as error:
        return f"cannot connect to {parts.hostname}:{port} ({error.strerror or error})"
    except OSError:
        return None  # slow or filtered: the model request's own check decides


def preflight(models: Sequence[str], api_base: str | None, seconds: float = PREFLIGHT_SECONDS) -> LLMError | None:
    """The first refusal among `models` (each asked once, side by side), or None where every one answered
    or only met trouble a run's retries may outlast (warned of)."""
    distinct = list(dict.fromkeys(models))
    if not distinct:
        return None
    with ThreadPoolExecutor(max_workers=len(distinct), thread_name_prefix="preflight") as pool:
        failures = list(pool.map(lambda model: _ask(model, api_base, seconds), distinct))
    refusals = [failure for failure in failures if failure is not None and refuses(failure)]
    for failure in failures:
        if failure is not None and not refuses(failure):
            log.warning("The model check met trouble, and the run goes on: %s", failure)
    return refusals[0] if refusals else None


def refuses(failure: LLMError) -> bool:
    """True for a failure that every later call to the model would meet."""
    detail = str(failure).removeprefix(f"{failure.model}: ")  # the model's own name may read "unknown-model"
    return failure.kind in REFUSING or (failure.kind == "bad_request" and bool(_UNKNOWN_MODEL.search(detail)))


def _ask(model: str, api_base: str | None, seconds: float) -> LLMError | None:
    """One request for one token; its failure, or None where a reply came (whatever its text: a reply with
    no text still says the server knows the model)."""
    settings = LLMSettings(model=model, api_base=api_base, timeout=seconds, max_tokens=1, max_retries=0)
    try:
        complete_prompt(settings, PREFLIGHT_PROMPT)
    except LLMError as failure:
        return None if failure.kind == "bad_response" else failure
    return None
