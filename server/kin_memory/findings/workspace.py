"""KM300–KM306: the workspace stamp."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

from ..store.categories import EPISODIC, PREFERENCE, PROJECT_FACT
from ..store.context import Context
from ..store.memory import Memory
from ..store.paths import SYNC_MACHINES, in_sync_folder
from ..store.workspace import (
    GLOBAL,
    main_worktree,
    own_workspaces,
    repository_of_stamp,
    stamp_kind,
    unsafe_stamp,
    visibility,
)
from .edits import delete_entry_lines, insert_before_close, replace, yaml_scalar
from .model import Finding, Fix


def _memo(ctx: Context, key: str, compute: Callable[[], object]) -> Any:
    """A disk fact about a stamp, asked once per check (see Context.disk)."""
    if key not in ctx.disk:
        ctx.disk[key] = compute()
    return ctx.disk[key]


def _canonical_candidate(stamp: str) -> str | None:
    """What a non-canonical path stamp was meant to be, when that can be known."""
    if stamp.startswith("~"):
        stamp = os.path.expanduser(stamp)
    if not os.path.isabs(stamp):
        return None
    real = os.path.realpath(stamp)
    return real if os.path.exists(real) else None


def _not_canonical_reason(stamp: str) -> str | None:
    if stamp.startswith("~"):
        return "starts with `~`"
    if not stamp.startswith("/"):
        return "is relative"
    if len(stamp) > 1 and stamp.endswith("/"):
        return "has a trailing slash"
    parts = stamp.split("/")
    if ".." in parts or "." in parts or "" in parts[1:]:
        return "contains `.`, `..` or an empty component"
    if os.path.exists(stamp) and os.path.realpath(stamp) != stamp:
        return "goes through a symlink"
    return None


def gone_quiet(stamp: object, ctx: Context) -> bool:
    """KM301: a canonical path stamp whose repository no longer exists, so the memory surfaces nowhere
    (the health view counts these from the stamp alone, without the frontmatter's spans)."""
    if not isinstance(stamp, str) or stamp_kind(stamp) != "path":
        return False
    if _memo(ctx, "reason:" + stamp, lambda: _not_canonical_reason(stamp)):
        return False  # KM302 comes first: a path that is not canonical never matched anything
    if _memo(ctx, "isdir:" + stamp, lambda: os.path.isdir(stamp)):
        return False
    # Another machine's path for a repository cloned here surfaces here (the mapping every view uses).
    if not in_sync_folder(ctx.root, SYNC_MACHINES):
        return True
    from ..store.workspace_aliases import local_repository

    return not _memo(ctx, "mapped:" + stamp, lambda: local_repository(ctx.root, stamp, ctx.active))


def flagged(stamp: str, ctx: Context) -> bool:
    """Whether a stamp draws a finding of its own wherever it is written: unsafe (KM304), a path that is
    not canonical (KM302), gone (KM301) or a linked worktree (KM305). Completion offers no such value."""
    kind = stamp_kind(stamp)
    if kind == "invalid":
        return True
    if kind != "path":
        return False
    if _memo(ctx, "reason:" + stamp, lambda: _not_canonical_reason(stamp)) or gone_quiet(stamp, ctx):
        return True
    return bool(_memo(ctx, "worktree:" + stamp, lambda: main_worktree(stamp)))


class _Verdict(NamedTuple):
    """What a check says of a stamp, whichever memory carries it (worked out once per check)."""

    reason: str | None  # KM302: why the path is not canonical
    target: str | None  # KM302's fix: the realpath it was meant to be
    gone: bool  # KM301
    main: str | None  # KM305: the main working tree of the linked worktree it names
    top: str | None  # KM307: the repository it is a folder of
    hidden: bool  # KM303: not visible from the active workspaces


def _verdict(stamp: str, kind: str, ctx: Context) -> _Verdict:
    """The stamp's verdict, worked out once per check (see Context.disk): a store's thousands of memories
    share a few stamps."""
    verdict: _Verdict = _memo(ctx, "verdict:" + stamp, lambda: _worked_out(stamp, kind, ctx))
    return verdict


def _worked_out(stamp: str, kind: str, ctx: Context) -> _Verdict:
    reason = target = main = top = None
    gone = False
    if kind == "path":
        reason = _memo(ctx, "reason:" + stamp, lambda: _not_canonical_reason(stamp))
        if reason:
            target = _memo(ctx, "candidate:" + stamp, lambda: _canonical_candidate(stamp))
        elif gone_quiet(stamp, ctx):
            gone = True
        else:
            main = _memo(ctx, "worktree:" + stamp, lambda: main_worktree(stamp))
            if not main:
                top = repository_of_stamp(stamp, ctx.active)
    hidden = bool(
        ctx.active
        and kind in ("path", "label")
        and stamp not in ctx.active
        and not visibility(stamp, ctx.active).visible
    )
    return _Verdict(reason, target, gone, main, top, hidden)


def check(memory: Memory, ctx: Context) -> list[Finding]:
    fm = memory.frontmatter
    if memory.is_index or fm.status != "ok":
        return []
    entry = fm.get("workspace")
    # another machine's path for this workspace is no stamp to offer (asked once per check)
    own = _memo(ctx, "own-workspaces", lambda: own_workspaces(ctx.active, ctx.root))
    active = own[0] if len(own) == 1 and own[0] != GLOBAL else None
    category = memory.category
    if entry is None or (entry.is_scalar and not entry.is_string and entry.value is None):
        if category in (PROJECT_FACT, EPISODIC) and fm.get("category") is not None:
            fixes = (
                (
                    Fix(
                        f"Stamp with the active workspace {active}",
                        (insert_before_close(memory, f"workspace: {yaml_scalar(active)}"),),
                        preferred=True,
                    ),
                )
                if active
                else ()
            )
            span = fm.get("category").key_span  # type: ignore[union-attr]
            return [
                Finding(
                    "KM300",
                    span,
                    f"{category} without `workspace`: global, visible in every workspace",
                    fixes,
                )
            ]
        return []
    stamp = entry.value
    kind = stamp_kind(stamp) if entry.is_string else "invalid"
    if kind == "invalid":
        why = (unsafe_stamp(stamp) if isinstance(stamp, str) else None) or "is not a string"
        return [Finding("KM304", entry.value_span, f"workspace stamp {why}: it can never match a workspace")]
    assert isinstance(stamp, str)
    findings: list[Finding] = []
    if category == PREFERENCE and kind != "global":  # `global` says what a preference is anyway
        findings.append(
            Finding(
                "KM306",
                entry.key_span,
                "a preference is global by design; this stamp narrows it to one workspace",
                (Fix("Remove the workspace stamp", (delete_entry_lines(memory, entry),), preferred=True),),
            )
        )
    verdict = _verdict(stamp, kind, ctx)
    if kind == "path":
        if reason := verdict.reason:
            target = verdict.target
            fixes = (
                (
                    Fix(
                        f"Replace with the realpath {target}",
                        (replace(entry.value_span, yaml_scalar(target)),),
                        preferred=True,
                    ),
                )
                if target
                else ()
            )
            findings.append(
                Finding(
                    "KM302",
                    entry.value_span,
                    f"workspace path {reason}: stamps are realpaths, so this never matches a workspace",
                    fixes,
                )
            )
        elif verdict.gone:
            # Not preferred: a memory whose repository moved may be another repository's (payments, seen
            # from webapp); re-stamping it to this workspace is a choice the person makes, never the
            # light bulb's default. (Made here only: every other stamp would pay for fixes it never has.)
            restamp = (
                (
                    Fix(
                        f"Re-stamp to this workspace {active} (if this memory is about it)",
                        (replace(entry.value_span, yaml_scalar(active)),),
                    ),
                )
                if active
                else ()
            )
            make_global = Fix("Make global (`workspace: global`)", (replace(entry.value_span, GLOBAL),))
            findings.append(
                Finding(
                    "KM301",
                    entry.value_span,
                    f"workspace {stamp} no longer exists (moved or deleted repo?): this memory has gone quiet",
                    (
                        *restamp,
                        make_global,
                        Fix(
                            f"Re-stamp every memory stamped {stamp}…",
                            command="restampAll",
                            argument=(("stamp", stamp),),
                        ),
                        Fix(
                            f"Make every memory stamped {stamp} global",
                            command="restampAll",
                            argument=(("stamp", stamp), ("to", GLOBAL)),
                        ),
                    ),  # fmt: skip
                )
            )
        else:
            if main := verdict.main:
                findings.append(
                    Finding(
                        "KM305",
                        entry.value_span,
                        f"stamped with a linked git worktree; the agent stamps its main working tree {main}",
                        (
                            Fix(
                                f"Replace with {main}",
                                (replace(entry.value_span, yaml_scalar(main)),),
                                preferred=True,
                            ),
                        ),
                    )
                )
            elif top := verdict.top:
                findings.append(
                    Finding(
                        "KM307",
                        entry.value_span,
                        f"stamped with a folder inside the repository {top}; every door now stamps the "
                        "repository's top level (this memory stays visible from the whole repository)",
                        (
                            Fix(
                                f"Replace with {top}",
                                (replace(entry.value_span, yaml_scalar(top)),),
                                preferred=True,
                            ),
                        ),
                    )
                )

    if verdict.hidden:
        findings.append(
            Finding(
                "KM303",
                entry.value_span,
                f"belongs to workspace {stamp}: not visible from {', '.join(ctx.active)}",
            )
        )
    return findings


def repointed(finding: Finding, stamp: str, homes: tuple[str, ...]) -> tuple[Fix, ...]:
    """KM301's fixes with the repository's new path first, when it was found (workspace_aliases.new_homes,
    asked when the fixes are: the check itself never runs git for it). One new path is the fix that cannot
    be wrong, preferred; two clones are each offered, neither preferred. Without one the finding's own
    fixes stand, none preferred (re-stamping to the open workspace is a choice the person makes)."""
    if finding.code != "KM301" or not homes:
        return finding.fixes
    only = len(homes) == 1
    first = tuple(
        Fix(f"Point at the repository's new path {home}", (replace(finding.span, yaml_scalar(home)),),
            preferred=only)
        for home in homes
    )  # fmt: skip
    every = tuple(
        Fix(f"Point every memory stamped {stamp} at {home}", command="restampAll",
            argument=(("stamp", stamp), ("to", home)))
        for home in homes
    )  # fmt: skip
    return (*first, *every, *finding.fixes)
