"""What a repository is, whatever folder it is cloned in: the identities two machines can compare.

A workspace stamp is a realpath, which differs between machines (`/home/me/src/api` on one,
`/Users/me/code/api` on another). Two clones are the same repository when their normalized `origin`
addresses match; a shared first commit counts only for repositories that have no `origin` at all. A fork
shares its upstream's first commits, so a first commit alone would let a fork (or any clone of any
history) see the upstream's memories; the address is what the person chose to work with. A repository
has one kind of identity, then:

- `url:<host>/<path>`: the `origin` remote, normalized so that the spellings of one address agree
  (`git@host:owner/name.git`, `https://host/owner/name`, `ssh://git@host/owner/name.git`): no scheme, no
  user or password (credentials are never kept), no port, the host in lower case, no trailing `.git`
  or `/`;
- `path:<realpath>`: an `origin` that is a folder on disk (a bare repository next to the clones);
- `root:<commit>`: a first commit of its history (`git rev-list --max-parents=0 HEAD`), only for a
  repository with no `origin`.

A folder below the top of its repository (a package of a monorepo opened on its own) adds its place in
the repository (`#packages/web`): two different folders of one repository are not one workspace.

Read with the person's `git` (an argument list, no prompt, a short timeout). Whatever fails means no
identity, never an error: the folder is then only itself, as it always was.
"""

from __future__ import annotations

import os
import re
import subprocess
from urllib.parse import unquote, urlsplit

from ..sinks.controls import HOSTILE

TIMEOUT = 3.0  # seconds per git command: a local read, so a slow one is a broken one
MAX_URL = 2048  # characters of a remote address worth reading
MAX_IDENTITY = 512  # characters of one identity (what a machines file may carry, see aliases.py)
MAX_ROOTS = 8  # first commits kept (a history that merged unrelated ones has several)
URL, PATH, ROOT = "url:", "path:", "root:"
_SCHEMES = ("https", "http", "ssh", "git", "git+ssh", "ssh+git")
_HOST = re.compile(r"^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$")
_SCP = re.compile(r"^(?:[^@/]+@)?([^@/:\[\]]+|\[[^\]]+\]):(?!//)(.+)$")  # git@host:owner/name
_COMMIT = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
# Settings that would make git read another repository than the folder asked about.
_AWAY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
         "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG",
         "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_PREFIX")  # fmt: skip


def _git(folder: str, *args: str) -> str | None:
    """`git -C folder args…`'s output, None on any failure (no git, not a repository, a timeout)."""
    env = {k: v for k, v in os.environ.items() if k not in _AWAY}
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    argv = ["git", "-C", folder, "-c", "core.fsmonitor=false", *args]
    try:
        done = subprocess.run(
            argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT,
            start_new_session=True, check=False,  # no terminal: nothing can prompt
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape").strip()


def _clean_path(path: str) -> str:
    path = path.strip("/")
    while path.endswith(".git") or path.endswith("/"):
        path = path.removesuffix(".git").rstrip("/")
    return path


def _host_url(host: str, path: str) -> str | None:
    host = host.lower()
    path = _clean_path(path)
    if not _HOST.match(host) or not path or any(p in ("", ".", "..") for p in path.split("/")):
        return None
    if "@" in path or ":" in path:
        return None  # a credential spelt inside the path: never kept, never synced
    return URL + host + "/" + path


def _local(url: str, folder: str) -> str | None:
    """A remote that is a folder on disk: its realpath (relative to the working tree, as git reads it)."""
    if url.startswith("file://"):
        url = unquote(urlsplit(url).path)
    return PATH + os.path.realpath(os.path.join(folder, os.path.expanduser(url)))


def normalized_remote(url: str, folder: str = "/") -> str | None:
    """The identity a remote address stands for (`url:host/owner/name` or `path:/real/path`); None for
    what is no address. A user or password in it is dropped, never kept."""
    url = url.strip()
    if not url or len(url) > MAX_URL or HOSTILE.search(url):
        return None
    if url.startswith(("/", "./", "../", "~", "file://")) or url in (".", ".."):
        return _local(url, folder)
    if "://" in url:
        try:
            parts = urlsplit(url)
            host = parts.hostname  # without user, password and port
        except ValueError:
            return None
        if parts.scheme.lower() not in _SCHEMES or not host:
            return None
        return _host_url(host, unquote(parts.path))
    scp = _SCP.match(url)
    if scp is None:
        return _local(url, folder)  # git reads anything else as a path
    return _host_url(scp.group(1), scp.group(2))


def _place(folder: str) -> str | None:
    """The folder's place below the top of its repository ("" at the top); None outside a repository."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if not top:
        return None
    rel = os.path.relpath(folder, os.path.realpath(top))
    if rel == ".":
        return ""
    return None if rel.startswith("..") else rel


def identities(folder: str) -> tuple[str, ...]:
    """The identities of the repository whose working tree is `folder` (a workspace stamp); () for a
    folder that is no repository, or when git cannot tell."""
    if not os.path.isabs(folder) or not os.path.isdir(folder):
        return ()
    place = _place(folder)
    if place is None:
        return ()
    found: list[str] = []
    origin = _git(folder, "remote", "get-url", "origin")
    remote = normalized_remote(origin, folder) if origin else None
    if remote:
        found.append(remote)
    elif not origin:  # a first commit stands for the repository only when it has no origin at all
        roots = _git(folder, "rev-list", "--max-parents=0", f"--max-count={MAX_ROOTS}", "HEAD") or ""
        found += sorted(ROOT + c for c in roots.split() if _COMMIT.match(c))
    suffix = "#" + place if place else ""
    return tuple(i + suffix for i in found if valid_identity(i + suffix))


def comparable(ids: frozenset[str]) -> frozenset[str]:
    """The identities of a repository that another may match: its addresses when it has one (a machine
    file written by an earlier version lists first commits beside them: those are not compared), else
    its first commits."""
    addresses = frozenset(i for i in ids if not i.startswith(ROOT))
    return addresses or ids


def valid_identity(value: object) -> bool:
    """What an identity may be, here and in a machine file read from elsewhere: one of the three kinds,
    bounded, with no control, invisible or bidirectional character."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_IDENTITY
        and value.startswith((URL, PATH, ROOT))
        and not HOSTILE.search(value)
    )
