"""Write-time rules for `create` of a memory file: category rewrite and workspace stamp.

Line-based: only the `category` value and an added `workspace` line change; every other byte stays.
"""

from __future__ import annotations

import json
import re

from kin_memory.store.categories import CATEGORIES, EPISODIC, PROJECT_FACT

DEFAULT_CATEGORY = EPISODIC  # never project-fact: an unclassified write must stay sweepable
STAMPED = (PROJECT_FACT, EPISODIC)  # preference and session stay global

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_-]*)[ \t]*:(.*)$")
_PLAIN = re.compile(r"[A-Za-z0-9_/~+][A-Za-z0-9_./~+ -]*")


def _scalar(raw: str) -> str:
    v = raw.strip()
    if " #" in v:
        v = v.split(" #", 1)[0].rstrip()
    if v.startswith("#"):
        return ""
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1]
    return v


def _yaml_value(value: str) -> str:
    if _PLAIN.fullmatch(value) and not value.endswith(" ") and ": " not in value:
        return value
    return json.dumps(value, ensure_ascii=False)


def _split_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) if text else []


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def apply(text: str, workspace: str | None) -> str:
    lines = _split_lines(text)
    if lines and _body(lines[0]) == "---" and lines[0] != "---":
        close = next((i for i in range(1, len(lines)) if _body(lines[i]) == "---"), None)
        if close is not None:
            return _apply_fenced(lines, close, workspace)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    head = ["---", f"category: {DEFAULT_CATEGORY}"]
    if workspace:
        head.append(f"workspace: {_yaml_value(workspace)}")
    head.append("---")
    return nl.join(head) + nl + text


def _apply_fenced(lines: list[str], close: int, workspace: str | None) -> str:
    nl = "\r\n" if lines[0].endswith("\r\n") else "\n"
    cat_index: int | None = None
    category: str | None = None
    has_workspace = False
    for i in range(1, close):
        m = _KEY.match(lines[i])
        if not m:
            continue
        if m.group(1) == "category" and cat_index is None:
            cat_index, category = i, _scalar(_body(m.group(2)))
        elif m.group(1) == "workspace":
            has_workspace = True
    out = list(lines)
    if category not in CATEGORIES:
        if cat_index is None:
            out.insert(1, f"category: {DEFAULT_CATEGORY}{nl}")
            close += 1
        else:
            line = out[cat_index]
            ending = line[len(_body(line)) :] or nl
            # drop an indented/list continuation of the bad value (a block value of `category`)
            end = cat_index + 1
            while end < close and (out[end][:1] in (" ", "\t") or out[end].startswith("- ")):
                end += 1
            out[cat_index:end] = [f"category: {DEFAULT_CATEGORY}{ending}"]
            close -= end - cat_index - 1
        category = DEFAULT_CATEGORY
    if category in STAMPED and workspace and not has_workspace:
        out.insert(close, f"workspace: {_yaml_value(workspace)}{nl}")
    return "".join(out)


def _lines_of(text: str, fm_close: int) -> list[str]:
    return [_body(line) for line in _split_lines(text)[1 : max(fm_close, 0)]]


def added_note(given: str, written: str) -> str | None:
    """One sentence for the create result when the write-time rules changed the agent's text: what the
    store added and the line the agent's own text now starts at, so an `insert` or a `view_range` the
    agent counts from its own text lands where it means. None when the text was written as given (the
    reference's result then stays exact)."""
    if given == written:
        return None
    from ..store.frontmatter import parse_frontmatter

    before, after = parse_frontmatter(given), parse_frontmatter(written)
    if after.status != "ok":
        return None
    old = set(_lines_of(given, before.close_line)) if before.status == "ok" else set()
    added = [f"`{line}`" for line in _lines_of(written, after.close_line) if line not in old]
    what = " and ".join([", ".join(added[:-1]), added[-1]] if len(added) > 1 else added) or "frontmatter"
    if before.status != "ok":
        n = after.body_line
        return (
            f"The store added {n} lines of frontmatter ({what}) above your text, so your first line is "
            f"now line {n + 1}."
        )
    start = after.body_line + 1
    if after.body_line == before.body_line:
        return f"The store set {what} in your frontmatter; your line numbers are unchanged."
    return f"The store added {what} to your frontmatter, so your text after it now starts at line {start}."
