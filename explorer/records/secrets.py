"""Secrets kept out of what a run writes and says: API keys and tokens, and the credentials a URL may carry."""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_SUFFIXES = ("_KEY", "_TOKEN")  # covers *_API_KEY
MIN_SECRET_LENGTH = 4  # shorter values are no secret, and replacing them would garble every message


def redact(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """`text` with the value of every *_KEY or *_TOKEN environment variable replaced by ***; `secrets`: those
    values as secret_values() gave them earlier, for a caller that redacts many texts."""
    for secret in secret_values() if secrets is None else secrets:
        text = text.replace(secret, "***")
    return text


def secret_values() -> tuple[str, ...]:
    """The values of the *_KEY and *_TOKEN environment variables, longest first, so that a key inside another
    goes too."""
    secrets = {
        value
        for name, value in os.environ.items()
        if name.upper().endswith(SECRET_SUFFIXES) and len(value) >= MIN_SECRET_LENGTH
    }
    return tuple(sorted(secrets, key=len, reverse=True))


def redact_url(url: str) -> str:
    """`url` with any password, user name and query values replaced by ***: a base URL may carry a key. One
    that does not parse (a bad port, an unclosed [) is cut before its query, and before its last @."""
    try:
        parts = urlsplit(url)
    except ValueError:
        base, query, _ = url.partition("?")
        scheme, slashes, place = base.rpartition("//")
        _, user, host = place.rpartition("@")
        return redact(f"{scheme}{slashes}{'***@' if user else ''}{host}{'?***' if query else ''}")
    if "@" not in parts.netloc and not parts.query:
        return redact(url)  # nothing to hide: as given, so that it pastes (sqlite:////abs/path keeps its slashes)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = urlencode([(name, "***") for name, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))
