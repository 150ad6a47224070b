"""Workspace stamps: canonical paths, linked worktrees, the active workspace and visibility."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..sinks.controls import escape_controls
from .paths import SYNC_MACHINES, in_sync_folder
from .stamps import GLOBAL as GLOBAL
from .stamps import MAX_STAMP_BYTES as MAX_STAMP_BYTES
from .stamps import looks_like_path as looks_like_path
from .stamps import stamp_kind as stamp_kind
from .stamps import unsafe_stamp as unsafe_stamp

GIT_FILE_LIMIT = 4096  # a `.git` file, `commondir` or `gitdir` holds one path


def _git_file(path: Path) -> str | None:
    """One of git's small pointer files, read through the bounded reader (a FIFO, a device or a huge
    file planted in its place is refused, never read); None when it cannot be read."""
    from .reader import Refused, read_file

    try:
        data = read_file(path, GIT_FILE_LIMIT).data
    except (Refused, OSError):
        return None
    return data.decode("utf-8", "replace").strip()


def _registered_main(candidate: Path, text: str) -> str | None:
    """The main working tree of the linked worktree at `candidate` whose `.git` file says `text`, or None
    unless the repository it names lists this worktree back: its gitdir is
    `<main>/.git/worktrees/<name>` and that folder's `gitdir` file points at this `.git` file. A folder
    with a hand-made `.git` file and `commondir` (an archive, a generated folder) cannot pose as a
    worktree of another repository: it is its own workspace."""
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text[len("gitdir:") :].strip())
    if not gitdir.is_absolute():
        gitdir = candidate / gitdir
    gitdir = Path(os.path.realpath(gitdir))
    common_rel = _git_file(gitdir / "commondir")
    if common_rel is None:
        return None  # a submodule's .git file, not a worktree
    common_dir = Path(os.path.realpath(gitdir / common_rel))
    if common_dir.name != ".git":
        return None  # bare repository: no main working tree
    if gitdir.parent != common_dir / "worktrees":
        return None  # not one of that repository's worktree entries
    # git writes the path back absolute, or relative to the entry (worktree.useRelativePaths)
    back = _git_file(gitdir / "gitdir")
    if back is None or os.path.realpath(gitdir / back) != os.path.realpath(candidate / ".git"):
        return None  # the repository does not list this folder as its worktree
    return str(common_dir.parent)


def main_worktree(path: str) -> str | None:
    """For a linked git worktree, the realpath of its main working tree; else None.

    A linked worktree has a `.git` *file* (`gitdir: <main>/.git/worktrees/<name>`); its `commondir`
    names the main repository's `.git`, and the main repository lists it back (see _registered_main).
    Read the files directly: no git subprocess on the hot path.
    """
    p = Path(path)
    for candidate in (p, *p.parents):
        dotgit = candidate / ".git"
        try:
            if dotgit.is_dir():
                return None
            if not dotgit.is_file():
                continue
        except OSError:
            return None
        text = _git_file(dotgit)
        main = _registered_main(candidate, text) if text is not None else None
        if main is None:
            return None
        if candidate != p:
            # A folder inside the worktree: keep the same relative position in the main tree.
            return os.path.join(main, os.path.relpath(p, candidate))
        return main
    return None


MAX_WORKTREES = 64  # linked worktrees of one repository looked at (each is two small files)


def linked_worktrees(top: str) -> list[str]:
    """The linked worktrees of the repository whose main working tree is `top` (realpaths), each one
    that points back at it (main_worktree): what `git worktree list` shows, read from the files."""
    entries = Path(top) / ".git" / "worktrees"
    try:
        names = sorted(os.listdir(entries))[:MAX_WORKTREES]
    except OSError:
        return []
    out = []
    for name in names:
        back = _git_file(entries / name / "gitdir")  # the worktree's own `.git` file
        if back is None:
            continue
        folder = os.path.realpath(os.path.dirname(os.path.join(entries, name, back)))
        if main_worktree(folder) == os.path.realpath(top):
            out.append(folder)
    return out


def canonical_workspace(path: str | os.PathLike[str]) -> str:
    """The workspace of a folder, the one rule every door uses (MCP roots, the editor's folders, the
    command line's current directory, `MemoryTool(workspace=…)`, an absolute path in a setting): the
    realpath's git top level when it is inside a repository (a monorepo package is its repository, so
    every door and every subfolder sees the same memories), a linked worktree → its main working tree,
    else the folder's realpath. A path that is not valid UTF-8 is spelt with `\\xNN` escapes: a stamp is
    text in a memory file and in every database, so such a repository is still one workspace, stamped
    and filtered consistently."""
    from .scan import shown_name

    real = os.path.realpath(os.path.expanduser(os.fspath(path)))
    top = _git_toplevel(real) or real
    return shown_name(main_worktree(top) or top)


def repository_of_stamp(stamp: str, active: tuple[str, ...]) -> str | None:
    """The active workspace an absolute path stamp belongs to though it is not that workspace's own
    spelling, or None: a folder inside the repository (what the doors stamped before every door stamped
    the repository's top level), a linked worktree of it, `<repository>/.`. The stamp is resolved as a
    folder is (canonical_workspace), so a nested repository of its own stays apart."""
    if not active or not stamp.startswith("/"):
        return None
    top = _stamp_repository(stamp)
    return top if top != stamp and top in active else None


@functools.lru_cache(maxsize=4096)
def _stamp_repository(stamp: str) -> str:
    """canonical_workspace of a stamp's folder, remembered: visibility asks it once per memory, and a
    folder's repository does not change while a server runs (a folder made into a repository of its
    own later is a rare case a restart settles)."""
    return canonical_workspace(stamp)


def is_inside(path: str, root: Path) -> bool:
    try:
        Path(path).relative_to(root)
        return True
    except ValueError:
        return False


def active_workspaces(
    folders: list[str] | tuple[str, ...], root: Path, override: str | None = None
) -> tuple[str, ...]:
    """Editor folders → active workspaces (with_equivalents). Folders inside the store are the
    operator's view."""
    if override:
        try:
            return with_equivalents(workspace_value(override), root)
        except WorkspaceValueError:
            pass  # reported when the setting was read; the folders decide
    seen: list[str] = []
    for folder in folders:
        real = os.path.realpath(os.path.expanduser(folder))
        if is_inside(real, root):
            continue  # checked before the repository: a store kept inside a repository is still the store
        canon = canonical_workspace(real)
        if is_inside(canon, root):
            continue
        if canon not in seen:
            seen.append(canon)
    return with_equivalents(seen, root)


def with_equivalents(own: Iterable[str | None], root: Path) -> tuple[str, ...]:
    """The active workspaces of a view from `own` (this machine's): those first, in order (the first
    stamps what the agent writes), then the paths other machines syncing this store give to the same
    repositories (workspace_aliases.py), so the memories written there surface here. Every door builds
    its active tuple here."""
    seen = list(dict.fromkeys(w for w in own if w))
    if not in_sync_folder(root, SYNC_MACHINES):
        return tuple(seen)
    from .workspace_aliases import equivalent_stamps

    for w in list(seen):
        seen += [e for e in equivalent_stamps(root, w) if e not in seen]
    return tuple(seen)


def machines_key(root: Path) -> object:
    """What the other machines' files say, as a cache key part (they decide KM301); "" when the store
    is not synced."""
    if not in_sync_folder(root, SYNC_MACHINES):
        return ""
    from .workspace_aliases import mapping_key

    return mapping_key(root)


def own_workspaces(active: tuple[str, ...], root: Path) -> tuple[str, ...]:
    """The workspaces of `active` that are this machine's (with_equivalents' additions left out)."""
    if not in_sync_folder(root, SYNC_MACHINES):
        return active
    from .workspace_aliases import equivalent_stamps

    mapped = {e for w in active for e in equivalent_stamps(root, w)}
    return tuple(w for i, w in enumerate(active) if i == 0 or w not in mapped)


class WorkspaceValueError(ValueError):
    """A workspace value no stamp could safely carry; the message is a sentence."""


def workspace_value(value: str) -> tuple[str, ...]:
    """An explicit active workspace (the editor's workspace setting, `--workspace`, a command's
    `workspace` argument): `none` (or "") is the operator's view, `global` is itself, an absolute path
    (or `~/…`) is canonicalised as the agent stamps it, and anything else is a LABEL, matched verbatim
    (the seed's `workspace: team-infra`): never resolved against the current directory. A relative path
    or an unsafe label, which the stamp checks flag (KM302, KM304), is refused with the reason."""
    if value in ("", "none"):
        return ()
    if value == GLOBAL:
        return (GLOBAL,)
    shown = f"`{escape_controls(value[:200])}`"
    problem = unsafe_stamp(value)
    if problem:
        raise WorkspaceValueError(f"The workspace {shown} {problem}: no memory can be stamped with it.")
    if value.startswith(("/", "~")):
        return (canonical_workspace(value),)
    if looks_like_path(value):
        raise WorkspaceValueError(
            f"The workspace {shown} is a relative path: give a repository's absolute path, `global`, "
            "`none`, or a label without `/` (such as team-infra)."
        )
    return (value,)


def cli_workspace(arg: str | None, root: Path, cwd: str | None = None) -> str | None:
    """`--workspace` as workspace_value reads it (raises WorkspaceValueError); without it, the git top
    level (or realpath) of cwd when it is outside the store, else none."""
    if arg is not None:
        chosen = workspace_value(arg)
        return chosen[0] if chosen else None
    cwd = os.path.realpath(cwd or os.getcwd())
    if is_inside(cwd, root):
        return None
    return canonical_workspace(cwd)


def _git_toplevel(cwd: str) -> str | None:
    """The nearest folder at or above `cwd` holding a `.git` (folder, worktree or submodule file)."""
    for candidate in (Path(cwd), *Path(cwd).parents):
        try:
            if (candidate / ".git").exists():
                return str(candidate)
        except OSError:
            return None
    return None


@dataclass(frozen=True)
class Visibility:
    visible: bool
    scope: str  # "global", "global (no stamp)", "this workspace", "other workspace", "operator view"


def visibility(stamp: object, active: tuple[str, ...]) -> Visibility:
    """A memory is visible in W when its stamp is absent, `global`, or equal to W."""
    kind = stamp_kind(stamp)
    if kind == "absent":
        return Visibility(True, "global (no stamp)")
    if kind == "global":
        return Visibility(True, "global")
    if not active:
        return Visibility(True, "operator view")
    if kind != "invalid" and stamp in active:
        return Visibility(True, "this workspace")
    if kind == "path" and isinstance(stamp, str) and repository_of_stamp(stamp, active):
        return Visibility(True, "this workspace")
    return Visibility(False, "other workspace")
