"""What a reflection pass would change in the store: the change list, its unified diff, and applying it.

Applying (the command line, or an editor without workspace/applyEdit) goes through the memory tool's
guard and atomic writes, and refuses any change whose file moved since it was staged (the agent may have
written meanwhile): the user approved that diff, not another.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from ..store.paths import real_path

KINDS = ("create", "edit", "rename", "delete")


@dataclass(frozen=True)
class Change:
    kind: str  # create | edit | rename | delete
    path: str  # virtual path (for a rename: the new path)
    old_path: str | None = None  # rename: the old path
    before: bytes | None = None  # the store's bytes when staged (edit/delete/rename)
    after: bytes | None = None  # the staged bytes (create/edit)
    is_dir: bool = False
    conflict: bool = False  # the store's file changed while the pass ran

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "path": self.path}
        if self.old_path is not None:
            out["from"] = self.old_path
        if self.is_dir:
            out["folder"] = True
        if self.conflict:
            out["conflict"] = True
        return out

    def describe(self) -> str:
        if self.kind == "rename":
            return f"rename {self.old_path} → {self.path}"
        return f"{self.kind} {self.path}{'/' if self.is_dir else ''}"


def _lines(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def unified_diff(changes: list[Change]) -> str:
    out: list[str] = []
    for c in changes:
        if c.kind == "rename":
            out.append(f"rename from {c.old_path}\nrename to {c.path}\n")
            continue
        if c.is_dir:
            out.append(f"delete folder {c.path}/\n")
            continue
        a = _lines(c.before if c.kind != "create" else None)
        b = _lines(c.after if c.kind != "delete" else None)
        if a is None or b is None:
            out.append(f"Binary file {c.path} differs\n")
            continue
        old = "/dev/null" if c.kind == "create" else c.path
        new = "/dev/null" if c.kind == "delete" else c.path
        for line in difflib.unified_diff(a, b, old, new):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def summary_of(changes: list[Change]) -> str:
    if not changes:
        return "no changes"
    counts = {k: sum(1 for c in changes if c.kind == k) for k in KINDS}
    words = {"create": "created", "edit": "edited", "rename": "renamed", "delete": "deleted"}
    return ", ".join(f"{n} {words[k]}" for k, n in counts.items() if n)


# ------------------------------------------------------------------------------------------ apply


@dataclass(frozen=True)
class Applied:
    done: list[Change]
    failed: list[tuple[Change, str]]


def _current(root: Path, vpath: str) -> bytes | None:
    try:
        return real_path(root, vpath).read_bytes()
    except OSError:
        return None


def apply_changes(root: Path, changes: list[Change]) -> Applied:
    """Apply in order; stop at the first failure (later changes may depend on it)."""
    from ..tool import audit
    from ..tool.atomic import create_at, make_dirs, remove_at, rename_at, write_at
    from ..tool.guard import GuardError, open_dir, resolve

    root = Path(os.path.realpath(root))
    done: list[Change] = []
    for i, c in enumerate(changes):
        try:
            if c.conflict:
                raise RuntimeError(f"{c.path} changed in the store while reflecting")
            target = resolve(root, c.path)
            if target.is_root:
                raise RuntimeError("refusing to change /memories itself")
            if c.kind in ("edit", "delete", "rename") and not c.is_dir:
                src = (c.old_path or "") if c.kind == "rename" else c.path
                if _current(root, src) != c.before:
                    raise RuntimeError(f"{src} changed in the store since the preview")
            if c.kind == "create":
                make_dirs(root)
                fd = open_dir(root, target.content.dir_parts, create=True)
                try:
                    create_at(fd, target.content.name, c.after or b"")
                finally:
                    os.close(fd)
            elif c.kind == "edit":
                fd = open_dir(root, target.content.dir_parts)
                try:
                    write_at(fd, target.content.name, c.after or b"")
                finally:
                    os.close(fd)
            elif c.kind == "delete":
                fd = open_dir(root, target.entry.dir_parts)
                try:
                    remove_at(fd, target.entry.name)
                finally:
                    os.close(fd)
            elif c.kind == "rename":
                old = resolve(root, c.old_path or "")
                src_fd = open_dir(root, old.entry.dir_parts)
                try:
                    dst_fd = open_dir(root, target.content.dir_parts, create=True)
                    try:
                        rename_at(src_fd, old.entry.name, dst_fd, target.content.name)
                    finally:
                        os.close(dst_fd)
                finally:
                    os.close(src_fd)
            audit.record(root, f"reflect-{c.kind}", [p for p in (c.old_path, c.path) if p], "ok")
            done.append(c)
        except (GuardError, OSError, RuntimeError) as exc:
            message = (
                exc.message
                if isinstance(exc, GuardError)
                else (str(exc) if isinstance(exc, RuntimeError) else f"the {c.kind} of {c.path} failed")
            )
            audit.record(root, f"reflect-{c.kind}", [c.path], "error")
            return Applied(done, [(c, message)] + [(rest, "not attempted") for rest in changes[i + 1 :]])
    return Applied(done, [])
