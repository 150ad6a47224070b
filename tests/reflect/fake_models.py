"""Fake model servers for reflection tests: a threaded http.server on 127.0.0.1, scripted per test.

Each server answers POSTs to /v1/messages (Anthropic) and /v1/chat/completions (OpenAI) from a list of
canned steps, in order, and records every request (path, headers, JSON body). A step is a JSON body
(status 200), a `Reply(status, body, sleep)`, or a callable taking the request body and returning either.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: object = field(default_factory=dict)
    sleep: float = 0.0
    raw: bytes | None = None  # sent verbatim instead of body (for broken JSON)
    headers: dict = field(default_factory=dict)


@dataclass
class Request:
    path: str
    headers: dict
    body: dict


class FakeModel:
    def __init__(self, steps: list) -> None:
        self.steps = list(steps)
        self.requests: list[Request] = []
        self.stop = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length") or 0)
                data = self.rfile.read(length)
                try:
                    body = json.loads(data or b"{}")
                except ValueError:
                    body = {"unparsed": data.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append(
                        Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    step = (
                        fake.steps.pop(0)
                        if fake.steps
                        else Reply(500, {"error": {"message": "script exhausted"}})
                    )
                if callable(step):
                    step = step(body)
                reply = step if isinstance(step, Reply) else Reply(200, step)
                if reply.sleep and fake.stop.wait(reply.sleep):
                    return
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# ------------------------------------------------------------------- Anthropic /v1/messages shapes

_ids = iter(range(1, 1_000_000))


def anthropic_tool_use(*inputs: dict, text: str = "", name: str = "memory") -> dict:
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{next(_ids):02d}", "name": name, "input": i} for i in inputs
    ]
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def anthropic_end(text: str = "Done.") -> dict:
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_error(status: int, kind: str, message: str) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}})


# -------------------------------------------------------- OpenAI /v1/chat/completions shapes


def openai_tool_calls(*arguments: dict | str, name: str = "memory") -> dict:
    calls = [
        {
            "id": f"call_{next(_ids)}",
            "type": "function",
            "function": {"name": name, "arguments": a if isinstance(a, str) else json.dumps(a)},
        }
        for a in arguments
    ]
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1,
        "model": "local-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": calls},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def openai_stop(text: str = "Done.") -> dict:
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1,
        "model": "local-test",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def openai_error(status: int, message: str) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "server_error", "code": None}})
