"""Every call to a language model goes through here; the only module that imports litellm.

litellm is imported on first use, after the settings that stop it from
fetching a price map or reading .env files at import.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0


def _litellm():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    import litellm

    return litellm


def complete(model, prompt, api_base=None, temperature=0.2, timeout=60.0, max_tokens=600) -> Reply:
    """One chat completion; the API key comes from the environment, as litellm expects."""
    litellm = _litellm()
    kwargs = {}
    if api_base:
        kwargs["api_base"] = api_base
        # Local OpenAI-compatible servers need some key; they ignore its value.
        if model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "not-needed"
    start = time.perf_counter()
    response = litellm.completion(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        temperature=temperature,
        timeout=timeout,
        max_tokens=max_tokens,
        **kwargs,
    )
    usage = getattr(response, "usage", None)
    return Reply(
        text=response.choices[0].message.content or "",
        model=model,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        latency=round(time.perf_counter() - start, 4),
    )
