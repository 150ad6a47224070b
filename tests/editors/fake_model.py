"""A scripted model server for the editor end-to-end tests, run as its own process on 127.0.0.1.

    python tests/editors/fake_model.py SCRIPT.json [--state FILE] [--key-env NAME]

It speaks the real wire formats (the OpenAI chat-completions and Anthropic messages APIs, through
tests/reflect/fake_models.py) and answers every POST with the script's next step, in order, across
however many reflection passes the test runs. The script is a JSON file:

    {"format": "openai" | "anthropic",
     "steps": [{"tool_calls": [{"command": "create", "path": "/memories/…", "file_text": "…"}, …]},
               {"stop": "Saved one preference."},
               {"error": 500, "message": "…"}]}

It prints its base URL (`http://127.0.0.1:PORT`, without `/v1`) as its first line of output, and
counts requests: `GET /requests` answers `{"requests": N, "remaining": K, "withKey": M, "paths": […]}`,
and `--state FILE` keeps the same JSON in a file, rewritten before each answer is sent (so a test that
got a reply can read a count that includes it). `withKey` counts the requests that carried the value of
the environment variable `--key-env` names (as a bearer token or `x-api-key`); the key itself is never
printed or stored. It exits when its standard input closes (its parent is gone) or on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "reflect"))

from fake_models import (  # noqa: E402 - after the path above
    FakeModel,
    anthropic_end,
    anthropic_error,
    anthropic_tool_use,
    openai_error,
    openai_stop,
    openai_tool_calls,
)


def reply(fmt: str, step: dict) -> object:
    """One script step as the provider's response body."""
    if "tool_calls" in step:
        calls = step["tool_calls"]
        if fmt == "anthropic":
            return anthropic_tool_use(*calls, text=step.get("text", ""))
        return openai_tool_calls(*calls)
    if "stop" in step:
        return anthropic_end(step["stop"]) if fmt == "anthropic" else openai_stop(step["stop"])
    if "error" in step:
        status, message = int(step["error"]), step.get("message", "scripted failure")
        return (
            anthropic_error(status, "api_error", message)
            if fmt == "anthropic"
            else openai_error(status, message)
        )
    raise SystemExit(f"a script step needs tool_calls, stop or error: {step!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--state", type=Path, help="a file kept up to date with the request count")
    parser.add_argument("--key-env", help="the environment variable holding the key requests should carry")
    args = parser.parse_args()
    script = json.loads(args.script.read_text())
    fmt = script.get("format", "openai")
    if fmt not in ("openai", "anthropic"):
        raise SystemExit(f"unknown format {fmt!r}")
    key = os.environ.get(args.key_env, "") if args.key_env else ""
    steps = [reply(fmt, s) for s in script.get("steps", [])]
    fake = FakeModel(steps)

    def state() -> dict:
        def keyed(headers: dict) -> bool:
            given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
            return bool(key) and given == key

        return {
            "requests": len(fake.requests),
            "remaining": max(len(steps) - len(fake.requests), 0),  # each request takes one step
            "withKey": sum(keyed(r.headers) for r in fake.requests),
            "paths": [r.path for r in fake.requests],
        }

    def save() -> None:
        if args.state:
            tmp = args.state.with_name(args.state.name + ".tmp")
            tmp.write_text(json.dumps(state()))
            os.replace(tmp, args.state)

    class Counted(list):
        """The request log: every request is counted (and the state file rewritten) before its answer."""

        def append(self, item: object) -> None:
            super().append(item)
            save()

    fake.requests = Counted()
    base = fake.httpd.RequestHandlerClass

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.rstrip("/") != "/requests":
                self.send_error(404)
                return
            with fake._lock:
                payload = json.dumps(state()).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    fake.httpd.RequestHandlerClass = Handler
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())

    def watch_stdin() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        done.set()

    with fake:
        save()
        print(fake.url, flush=True)
        threading.Thread(target=watch_stdin, daemon=True).start()
        done.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
