"""A local server that speaks Ollama's `/api/chat` for tests: litellm's `ollama_chat/` provider, no network.

As `ChatServer` (openai_stub_server.py), whose answers, records and model checks it shares: only the
request's shape (`format`, `options.num_predict`) and the reply's (`message`, `eval_count`) are Ollama's.
"""

from __future__ import annotations

from explorer.testing.chat_server import ChatServer


def ollama_chat(text: str, model: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> dict:
    """A non-streamed /api/chat answer of `text`."""
    return {
        "model": model,
        "created_at": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": text},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": prompt_tokens,
        "eval_count": completion_tokens,
    }


class OllamaServer(ChatServer):
    """Answers POST /api/chat; `api_base` is the server's root, as Ollama's is given."""

    PATH_PREFIX = ""

    def aside(self, path: str) -> dict | None:
        # litellm asks a model's details of /api/show (for its context length) after some calls.
        return (
            {"modelfile": "", "parameters": "", "template": "", "details": {}, "model_info": {}}
            if path == "/api/show"
            else None
        )

    def is_model_check(self, body: dict) -> bool:
        return (body.get("options") or {}).get("num_predict") == 1

    def completion(self, text: str, model: str) -> dict:
        return ollama_chat(text, model)
