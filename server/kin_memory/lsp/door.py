"""The TCP door: who may talk to the language server over a socket, and what they may say.

Over stdio the editor that started the server is its only client. A TCP port is reachable by every local
process and by every web page the user's browser shows (a `fetch` to 127.0.0.1 with a text/plain body
needs no preflight), so over TCP:

- the server listens on loopback only unless started with --allow-remote (cli/serve.py);
- each start writes a random token to a private file, `~/.kin/run/tcp-<port>.token` (0600, in a 0700
  folder, never through a link), and the client presents it as `initializationOptions.token` in
  `initialize`: a missing or wrong token is answered with an error and the connection closed;
- the framing is the protocol's only: header lines `Content-Length` and `Content-Type`, each ending in
  CRLF, then an empty line; anything else (an HTTP request line, another header, a malformed line)
  closes the connection before anything runs;
- before `initialize`, a request is answered ServerNotInitialized (-32002) and nothing else is done;
- the client's settings may not move the store, nor choose where reflection sends transcripts, with
  which key or to which provider: `memoryDir` and `reflection.{provider, baseUrl, apiKeyEnv}` are dropped
  from all it sends (initializationOptions, didChangeConfiguration, configuration answers); nor where
  the store is pushed: `kin.memory.sync`'s `remote` is dropped (it syncs with the remote the user set);
- one client: once one is admitted the port is closed (a second connection is refused); a connection
  that is not admitted is closed and the next one awaited.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import re
import secrets
import select
import socket
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .wire import MAX_BODY, FdReader, Readable, read_exactly

log = logging.getLogger("kin_memory.lsp")

TOKEN_KEY = "token"  # initializationOptions.token
ADMIT_WAIT = 10.0  # seconds a connection has to send `initialize` with the token
MAX_BEFORE_INIT = 32  # messages a connection may send before `initialize`
FIRST_BODY = 1 << 20  # bytes a message may have before `initialize`
MAX_HEADER_LINE = 1024
SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
NOT_INITIALIZED = "The server is not initialized: send initialize first."
# One header line: the length, or a content type (printable ASCII); nothing else is this protocol.
_HEADER_LINE = re.compile(
    rb"(?i:content-length)[ \t]*:[ \t]*(\d{1,12})[ \t]*\r\n|(?i:content-type)[ \t]*:[ -~]*\r\n"
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Unavailable(Exception):
    """The door cannot be opened safely (the port, the token file): a sentence for the terminal."""


def is_loopback(host: str) -> bool:
    """Whether listening on `host` reaches only this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


class Refused(ValueError):
    """The client broke the framing or did not present the token: its connection is closed."""


# -- opening ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Door:
    listener: socket.socket
    path: Path  # the token file
    token: str


def open_door(host: str, port: int) -> Door:
    """The listening socket and its token file (said on stderr); Unavailable with a sentence. Opened
    before the LSP stack is built: a port in use or an unsafe token folder stops the start at once."""
    try:
        listener = socket.create_server((host, port))
    except OSError as exc:
        raise Unavailable(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = listener.getsockname()[1]
    try:
        path, token = write_token(bound)
    except OSError as exc:
        listener.close()
        raise Unavailable(f"cannot write the token file in {token_folder()} ({exc.strerror or exc}); "
                          "the server does not listen without one") from None  # fmt: skip
    print(f"kin-memory: listening on {host}:{bound}; a client presents the token in {path} as "
          f"initializationOptions.{TOKEN_KEY}", file=sys.stderr, flush=True)  # fmt: skip
    return Door(listener, path, token)


# -- the token file ---------------------------------------------------------------------------------
def token_folder() -> Path:
    return Path.home() / ".kin" / "run"


def token_path(port: int) -> Path:
    return token_folder() / f"tcp-{port}.token"


def write_token(port: int) -> tuple[Path, str]:
    """A new random token in `~/.kin/run/tcp-<port>.token`: the folder 0700 and the user's, the file
    0600, neither reached through a link. OSError when that cannot be done (the server then refuses to
    listen: a door without a lock is not opened)."""
    token = secrets.token_urlsafe(32)
    folder = _private_folder()
    try:
        name = token_path(port).name
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=folder)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, token.encode() + b"\n")
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)  # a link of that name is replaced
    finally:
        os.close(folder)
    return token_path(port), token


def remove_token(path: Path, token: str) -> None:
    """At the end: the file goes, unless another server wrote its own token there since."""
    try:
        folder = _open_dir(path.parent)
    except OSError:
        return
    try:
        fd = os.open(path.name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
        try:
            held = os.read(fd, 256).strip().decode("ascii", "replace")
        finally:
            os.close(fd)
        if hmac.compare_digest(held, token):
            os.unlink(path.name, dir_fd=folder)
    except OSError:
        pass
    finally:
        os.close(folder)


def _open_dir(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        os.close(fd)
        raise PermissionError(f"{path} is not a folder of this user")
    return fd


def _private_folder() -> int:
    """`~/.kin/run`, made when missing, opened without following a link and kept 0700."""
    folder = token_folder()
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    fd = _open_dir(folder)
    if stat.S_IMODE(os.fstat(fd).st_mode) != 0o700:
        os.fchmod(fd, 0o700)
    return fd


# -- framing ----------------------------------------------------------------------------------------
class TimedReader(FdReader):
    """An FdReader whose reads give up at a deadline (the admission's), then read as usual."""

    def __init__(self, fd: int, deadline: float | None = None) -> None:
        super().__init__(fd)
        self.deadline = deadline

    def _fill(self) -> bool:
        if self.deadline is not None and not self.eof:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise Refused("the client did not send initialize with the token in time")
        return super()._fill()


def strict_body(stream: Readable, limit: int = MAX_BODY) -> bytes | None:
    """The next message body, its header exactly this protocol's; None at the end of the input between
    messages. Raises Refused for anything else (an HTTP request line, another header, a malformed line,
    a length over `limit`), so the connection closes before anything in it runs."""
    length: int | None = None
    started = False
    while True:
        line = stream.readline(MAX_HEADER_LINE)
        if not line and not started:
            return None
        started = True
        if line == b"\r\n" and length is not None:
            break
        match = _HEADER_LINE.fullmatch(line)
        if match is None:
            raise Refused("a header line that is not Content-Length or Content-Type")
        if match.group(1) is not None:
            if length is not None:
                raise Refused("a second Content-Length header")
            length = int(match.group(1))
    if length > limit:
        raise Refused(f"a {length}-byte message, over the {limit}-byte limit")
    body = read_exactly(stream, length)
    return body if len(body) == length else None


# -- admission --------------------------------------------------------------------------------------
def error_frame(msg_id: object, code: int, message: str) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def admit(reader: Readable, send: Callable[[bytes], None], token: str) -> bytes:
    """Read until `initialize` presents the token: its body (token taken out, settings screened) for the
    server to serve first. Requests before it are answered ServerNotInitialized and not run. Raises
    Refused (the connection is then closed) for a wrong or missing token, `exit`, unreadable input or
    too many messages before `initialize`."""
    for _ in range(MAX_BEFORE_INIT):
        body = strict_body(reader, FIRST_BODY)
        if body is None:
            raise Refused("the client left before initialize")
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            raise Refused("a message that is not JSON before initialize") from None
        if not isinstance(message, dict):
            raise Refused("a message that is not a JSON object before initialize")
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize" and "id" in message:
            if not _presents(message, token):
                send(error_frame(msg_id, INVALID_REQUEST, "This server takes TCP clients that present its "
                                 "token: send initializationOptions.token with the text of the token file "
                                 "the server named when it started."))  # fmt: skip
                raise Refused("initialize without the right token")
            return json.dumps(screened_message(message)).encode()
        if method == "exit":
            raise Refused("exit before initialize")
        if isinstance(method, str) and "id" in message:
            send(error_frame(msg_id, SERVER_NOT_INITIALIZED, NOT_INITIALIZED))
    raise Refused(f"more than {MAX_BEFORE_INIT} messages before initialize")


def _presents(message: dict, token: str) -> bool:
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.get(TOKEN_KEY) if isinstance(options, dict) else None
    return isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode())


# -- what a TCP client may not set ------------------------------------------------------------------
# Where the store is, where reflection sends transcripts, which key and which provider: the user's own
# settings (files, environment, the command line), never a client that merely reached the port.
STORE_KEYS = ("memoryDir",)
REFLECTION_KEYS = ("provider", "baseUrl", "apiKeyEnv")


def screened_body(body: bytes) -> bytes:
    """A message from a TCP client without the settings it may not set (the bytes as they came when
    there were none)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return body  # the transport answers it as unreadable
    if not isinstance(message, dict):
        return body
    cleaned = screened_message(message)
    return body if cleaned is message else json.dumps(cleaned).encode()


def screened_message(message: dict) -> dict:
    """`message` itself when it carries none of those settings, else a copy without them (and without
    the token); each drop is logged once as a sentence."""
    method, params = message.get("method"), message.get("params")
    dropped: list[str] = []
    if method == "initialize" and isinstance(params, dict):
        options = params.get("initializationOptions")
        if isinstance(options, dict):
            options = {k: v for k, v in options.items() if k != TOKEN_KEY}
            message = {**message, "params": {**params, "initializationOptions": _without(options, dropped)}}
    elif method == "workspace/didChangeConfiguration" and isinstance(params, dict):
        settings = _without(params.get("settings"), dropped)
        if dropped:
            message = {**message, "params": {**params, "settings": settings}}
    elif method == "workspace/executeCommand" and isinstance(params, dict):
        message = _without_remote(message, params, dropped)
    elif method is None and isinstance(message.get("result"), list):  # a workspace/configuration answer
        result = [_without(item, dropped) for item in message["result"]]
        if dropped:
            message = {**message, "result": result}
    for name in dict.fromkeys(dropped):
        log.warning(
            "kin-memory: a TCP client cannot set %s; ignored (the store comes from --root, KIN_MEMORY_DIR or "
            "~/.kin/settings.toml, and reflection is configured only by an editor that starts the server).",
            name,
        )
    return message


def _without_remote(message: dict, params: dict, dropped: list[str]) -> dict:
    """`kin.memory.sync` without a `remote`: where the whole store is pushed is the user's choice (set
    with the command line or an editor that starts the server), never a client that reached the port."""
    arguments = params.get("arguments")
    if params.get("command") != "kin.memory.sync" or not isinstance(arguments, list) or not arguments:
        return message
    first = arguments[0]
    if not isinstance(first, dict) or first.get("remote") is None:
        return message
    dropped.append("the sync remote")
    cleaned = {k: v for k, v in first.items() if k != "remote"}
    return {**message, "params": {**params, "arguments": [cleaned, *arguments[1:]]}}


def _without(section: object, dropped: list[str]) -> object:
    """The `kinMemory` section (or an object holding it) less the store and reflection endpoint keys."""
    if not isinstance(section, dict):
        return section
    out = dict(section)
    if isinstance(out.get("kinMemory"), dict):
        out["kinMemory"] = _without(out["kinMemory"], dropped)
    for key in STORE_KEYS:
        if out.pop(key, None) is not None:
            dropped.append(key)
    reflection = out.get("reflection")
    if isinstance(reflection, dict):
        kept = {k: v for k, v in reflection.items() if k not in REFLECTION_KEYS}
        dropped.extend(f"reflection.{k}" for k in REFLECTION_KEYS if reflection.get(k) is not None)
        out["reflection"] = kept
    return out
