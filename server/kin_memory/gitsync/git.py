"""Running the person's own `git` for a sync: an argument list (never a shell), a bounded time, no prompt.

A server must never hang on a credential prompt: `GIT_TERMINAL_PROMPT=0` makes git fail instead of
asking, and the command runs in a session of its own with no terminal, so ssh cannot ask either. Every
command names the store's repository explicitly (`GIT_DIR`, `GIT_WORK_TREE`): a store inside another
repository (a home folder kept in git) is never mistaken for it. Output is in the C locale so it can be
parsed. Whatever goes wrong becomes one SyncError whose message is a sentence for people.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..store.machine import Machine, MachineError, this_machine

MIN_VERSION = (2, 38)  # `git merge-tree --write-tree`: a merge computed without touching the files
LOCAL_TIMEOUT = 60.0  # seconds for a command that stays on this machine
NETWORK_TIMEOUT = 120.0  # seconds for a fetch or a push
MESSAGE_LIMIT = 300  # characters of git's own words quoted in a sentence
# Settings that would point git at another repository, index or object store than the store's own.
_INHERITED_AWAY = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_GRAFT_FILE", "GIT_IMPLICIT_WORK_TREE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE", "GIT_INTERNAL_SUPER_PREFIX", "GIT_QUARANTINE_PATH",
)  # fmt: skip
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PREFIX = re.compile(r"^(fatal|error|warning|remote):\s*", re.IGNORECASE)


class SyncError(Exception):
    """Why a sync could not be done; the message is a sentence for people (no git internals)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Done:
    code: int
    out: bytes
    err: str


_URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)([^\s'\"<>]*)")
_USERINFO = re.compile(r"^[^/?#]*@")
_SCP_CREDENTIAL = re.compile(r"(?<![\w/@.-])[^\s@/:'\"]+:[^\s@/'\"]+@(?=[\w.-]+:)")  # user:token@host:path
# transports a sync may use (git refuses every other, helpers such as `ext::` and `fd::` included)
ALLOWED_PROTOCOLS = "file:ssh:https:http"


def redact(text: str) -> str:
    """Text with every URL's user, password, query and fragment taken out (`https://host/path`): an
    address quoted in a message, a log or a synced file never carries a credential."""

    def one(found: re.Match[str]) -> str:
        rest = _USERINFO.sub("", found.group(2))
        return found.group(1) + re.split(r"[?#]", rest, maxsplit=1)[0]

    return _SCP_CREDENTIAL.sub("", _URL.sub(one, text))


def clean(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """One line of git's words fit to quote: no control characters, no credential in an address, no
    trailing period, bounded."""
    line = redact(_CONTROL.sub("", text)).strip().rstrip(".")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def first_line(err: str) -> str:
    """The first line of git's error output that says something (hints and blank lines skipped)."""
    for raw in err.splitlines():
        line = _PREFIX.sub("", clean(raw))
        if line and not raw.lower().startswith("hint:"):
            return line
    return ""


def environment(root: Path | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_AWAY}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C", "GIT_OPTIONAL_LOCKS": "0",
                "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS})  # fmt: skip
    if root is not None:
        env.update({"GIT_DIR": os.fspath(root / ".git"), "GIT_WORK_TREE": os.fspath(root)})
    env.update(extra or {})
    return env


def run(
    root: Path | None,
    args: Sequence[str],
    *,
    what: str,
    ok: Iterable[int] = (0,),
    timeout: float = LOCAL_TIMEOUT,
    env: Mapping[str, str] | None = None,
    data: bytes | None = None,
    cwd: Path | None = None,
) -> Done:
    """Run `git <args>` on the store at root; `what` names the step in a sentence ("Fetching from the
    remote"). A code outside `ok`, a missing git or an expired timeout raises SyncError."""
    argv = ["git", "-c", "core.quotepath=off", "-c", "core.autocrlf=false", *args]
    try:
        proc = subprocess.Popen(
            argv, cwd=os.fspath(cwd or root or Path.cwd()), env=environment(root, env),
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,  # no terminal: ssh cannot prompt, and a timeout stops its children too
        )  # fmt: skip
    except FileNotFoundError:
        raise SyncError("Git is not installed (or not on the PATH): sync needs git 2.38 or newer.") from None
    try:
        out, err_bytes = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise SyncError(
            f"{what} did not finish within {timeout:g} seconds and was stopped; "
            "check the network and the remote's address, then sync again."
        ) from None
    done = Done(proc.returncode, out, err_bytes.decode("utf-8", "replace"))
    if done.code not in set(ok):
        raise SyncError(failure(what, done.err))
    return done


def failure(what: str, err: str) -> str:
    said = first_line(err)
    return f"{what} failed: {said}." if said else f"{what} failed."


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.communicate()


def version() -> tuple[int, int, int]:
    """The installed git's version (0, 0, 0 when it cannot be read)."""
    done = run(None, ["--version"], what="Asking git for its version")
    found = re.search(rb"(\d+)\.(\d+)(?:\.(\d+))?", done.out)
    if found is None:
        return (0, 0, 0)
    major, minor, patch = found.groups()
    return (int(major), int(minor), int(patch or 0))


def require_version() -> None:
    have = version()
    if have[:2] < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise SyncError(
            f"Sync needs git {need} or newer (it merges without touching the files); "
            f"this machine has git {'.'.join(map(str, have))}."
        )


def lines(out: bytes) -> list[str]:
    return out.decode("utf-8", "surrogateescape").splitlines()


def one(out: bytes) -> str:
    """A command's single-line answer (an object id, a URL)."""
    return out.decode("utf-8", "surrogateescape").strip()


def machine_of(root: Path) -> Machine:
    """This machine's identity for a sync; SyncError (the same sentence) when it cannot be kept."""
    try:
        return this_machine(root)
    except MachineError as exc:
        raise SyncError(exc.message) from None
