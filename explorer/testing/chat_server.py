"""A local OpenAI-compatible chat server for tests: the real litellm path, no network.

`ChatServer(answer)` calls `answer(request_body)` for each POST. It may return
the reply text (a 200 chat completion), or a `Scripted` answer: any status,
headers and body, after a delay, or a dropped connection.

A run's model check before its first step (explorer/model/preflight.py, a request for one token) is
answered apart, by `preflight` ("OK" unless given), and kept in `preflights`, not in `records`: a test's
scripted replies and its count of requests are the run's own.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Scripted:
    status: int = 200
    body: dict | str | None = None  # None: a chat completion of `text`
    text: str = ""
    headers: dict = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    drop: bool = False  # close the connection without answering
    trickle: float = 0.0  # seconds between the body's bytes: a server that never quite times out a read


@dataclass(frozen=True)
class Record:
    body: dict
    headers: dict
    at: float  # time.perf_counter() when it arrived


def chat_completion(text, model="test-model", prompt_tokens=100, completion_tokens=20):
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error(status, message="scripted failure", headers=None):
    """An error answer in OpenAI's shape."""
    return Scripted(status=status, body={"error": {"message": message, "type": "test_error"}}, headers=headers or {})


def in_turn(*answers):
    """An answer function that gives `answers` in order, then the last one for ever."""
    queue = list(answers)
    lock = threading.Lock()

    def answer(request):
        with lock:
            return queue.pop(0) if len(queue) > 1 else queue[0]

    return answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a stalled handler must not hold up shutdown
    request_queue_size = 256  # parallel requests stall with the default of 5


class ChatServer:
    """Answers POST /v1/chat/completions; keeps a `Record` of every request."""

    def __init__(self, answer, preflight="OK"):
        self.answer = answer
        self.preflight = preflight  # the answer to each model check: a text, a Scripted, or a function like answer
        self.records: list[Record] = []
        self.preflights: list[dict] = []  # the model checks' request bodies
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                aside = server.aside(self.path)
                if aside is not None:  # what a client asks besides the chat (Ollama's model details)
                    answer = Scripted(body=aside)
                elif server.is_model_check(body):
                    with server._lock:
                        server.preflights.append(body)
                    answer = server.preflight(body) if callable(server.preflight) else server.preflight
                else:
                    with server._lock:
                        server.records.append(Record(body, dict(self.headers), time.perf_counter()))
                    answer = server.answer(body)
                if not isinstance(answer, Scripted):
                    answer = Scripted(text=answer)
                time.sleep(answer.delay)
                if answer.drop:
                    self.close_connection = True
                    return
                self._send(answer, body)

            def _send(self, answer, request):
                body = answer.body if answer.body is not None else server.completion(answer.text, request["model"])
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if not answer.trickle:
                        self.wfile.write(data)
                    for byte in data if answer.trickle else b"":
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(answer.trickle)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting: what a timeout test wants

            def log_message(self, *args):
                pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_address[1]}{self.PATH_PREFIX}"

    PATH_PREFIX = "/v1"  # what --api-base names

    def aside(self, path: str) -> dict | None:
        """The answer to a request for `path` that is no chat request, or None: it is one."""
        return None

    def is_model_check(self, body: dict) -> bool:
        """Whether the request is a run's model check (one token asked)."""
        return body.get("max_tokens") == 1

    def completion(self, text: str, model: str) -> dict:
        """The body of a 200 answer of `text`."""
        return chat_completion(text, model)

    @property
    def requests(self) -> list[dict]:
        """The request bodies, in arrival order."""
        with self._lock:
            return [record.body for record in self.records]

    def __enter__(self):
        # A short poll: shutdown() waits for it, and the default 0.5 s adds up over many tests.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
