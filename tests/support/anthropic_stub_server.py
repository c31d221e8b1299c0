"""A local server that speaks Anthropic's Messages API for tests: litellm's `anthropic/` provider, no network.

As `ChatServer` (explorer/testing/chat_server.py), whose answers and records it shares: only the reply's shape
(`content` blocks, `usage.input_tokens`) is Anthropic's.
"""

from __future__ import annotations

from explorer.testing.chat_server import ChatServer


class AnthropicServer(ChatServer):
    """Answers POST /v1/messages; `api_base` is the server's root, as Anthropic's is given."""

    PATH_PREFIX = ""

    def completion(self, text: str, model: str) -> dict:
        return {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }
