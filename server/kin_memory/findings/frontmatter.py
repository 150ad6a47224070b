"""KM100–KM106: the frontmatter block itself."""

from __future__ import annotations

import re

from ..store.categories import CATEGORIES, PROJECT_FACT
from ..store.context import Context
from ..store.memory import Memory
from .edits import insert_at, newline, replace, yaml_scalar
from .model import Finding, Fix, line_span

KNOWN_KEYS = {
    "category",
    "workspace",
    "title",
    "description",
    "name",
    "tags",
    "created",
    "updated",
    "source",
    "expires",
    "type",
}
_KEY_LINE = re.compile(r"^[A-Za-z_][\w-]*:(\s|$)")
_CONTINUATION = re.compile(r"^(\s+\S|-\s)")


def _key_block_end(lines: tuple[str, ...], start: int) -> int:
    """The last line of a run of `key: value` lines (with indented continuations) from start."""
    last = start
    for n in range(start, len(lines)):
        if _KEY_LINE.match(lines[n]) or (n > start and _CONTINUATION.match(lines[n])):
            last = n
        else:
            break
    return last


def _yaml_fixes(memory: Memory) -> tuple[Fix, ...]:
    """Where the value that breaks the YAML is an unclosed `[` or quote: close it; a `[` before a single
    path (a stray one: a stamp is one path) is better removed, and that fix is preferred."""
    from ..store.frontmatter import salvage

    fm = memory.frontmatter
    if fm.close_line < 0 or memory.frontmatter.close_line > len(memory.lines):
        return ()
    _, broken = salvage(list(memory.lines), fm.close_line)
    if broken is None:
        return ()
    end = insert_at(broken.span.end_line, broken.span.end_col, "]" if broken.opener == "[" else broken.opener)
    if broken.opener != "[":
        return (Fix("Close the quote", (end,), preferred=True),)
    close = Fix("Close the bracket", (end,), preferred=len(broken.items) != 1)
    if len(broken.items) != 1:
        return (close,)
    stray = Fix("Remove the stray `[`", (replace(broken.span, yaml_scalar(broken.items[0])),), preferred=True)
    return (stray, close)


def check(memory: Memory, ctx: Context) -> list[Finding]:
    fm = memory.frontmatter
    lines = memory.lines
    if memory.is_index or memory.read_error:
        return []
    if fm.status == "bare":
        nl = newline(memory)
        end = _key_block_end(lines, 0)
        close = (
            insert_at(end + 1, 0, "---" + nl)
            if end + 1 < len(lines)
            else insert_at(end, len(lines[end]), nl + "---" + nl)
        )
        fix = Fix("Wrap in `---` fences", (insert_at(0, 0, "---" + nl), close), preferred=True)
        return [
            Finding(
                "KM100",
                line_span(lines, 0),
                "first line looks like frontmatter but has no `---` fences: it is read as content "
                "(the file has no frontmatter and reads as project-fact)",
                (fix,),
            )
        ]
    if fm.status == "none":
        nl = newline(memory)
        fixes = tuple(
            Fix(
                f"Add frontmatter (category: {c})",
                (insert_at(0, 0, f"---{nl}category: {c}{nl}---{nl}"),),
                preferred=c == PROJECT_FACT,
            )
            for c in CATEGORIES
        )
        return [
            Finding("KM106", line_span(lines, 0), "no frontmatter: this memory reads as project-fact", fixes)
        ]
    if fm.status == "unclosed":
        nl = newline(memory)
        end = _key_block_end(lines, 1) if len(lines) > 1 and _KEY_LINE.match(lines[1]) else 0
        at = end + 1
        edit = (
            insert_at(at, 0, "---" + nl)
            if at < len(lines)
            else insert_at(end, len(lines[end]), nl + "---" + nl)
        )
        return [
            Finding(
                "KM101",
                line_span(lines, 0),
                "the opening `---` has no closing fence: the whole file is read as content",
                (Fix("Close the frontmatter fence", (edit,), preferred=True),),
            )
        ]
    if fm.status == "yaml_error":
        return [Finding("KM102", fm.error_span or line_span(lines, 0), fm.error, _yaml_fixes(memory))]
    if fm.status == "not_mapping":
        return [Finding("KM103", fm.error_span or line_span(lines, 0), fm.error)]
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for entry in fm.entries:
        if entry.key in seen:
            from .edits import delete_entry_lines

            findings.append(
                Finding(
                    "KM104",
                    entry.key_span,
                    f"duplicate key `{entry.key}` (first on line {seen[entry.key] + 1}): the first value is the one read",
                    (
                        Fix(
                            f"Remove the later duplicate `{entry.key}`",
                            (delete_entry_lines(memory, entry),),
                            preferred=True,
                        ),
                    ),
                )
            )
            continue
        seen[entry.key] = entry.key_span.line
        if entry.key not in KNOWN_KEYS:
            findings.append(
                Finding(
                    "KM105",
                    entry.key_span,
                    f"key `{entry.key}` is not known to the store (kept as is; only `category` and `workspace` drive behaviour)",
                )
            )
    return findings
