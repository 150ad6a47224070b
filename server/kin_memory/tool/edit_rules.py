"""Edits that cannot break a memory: what `str_replace` and `insert` may do to a file's frontmatter.

`create` puts `---`, `category:` and `workspace:` in front of a text that has none, and the model then
edits its own text counting lines and matching strings as it wrote them: an `insert` at line 0 pushed the
frontmatter into the body (the memory became a global project fact, never swept), an `insert` at line 1
put the model's line inside the YAML, and a `str_replace` of the repository path the model wrote matched
the stamp too ("Multiple occurrences"). So:

- a text that occurs in the body is matched in the body only; a match inside the frontmatter is taken
  only when the text occurs nowhere else (changing `category: episodic` on purpose still works);
- an edit (and a `create`) whose result would newly break the frontmatter (bare keys, no closing fence,
  YAML that does not parse or is not a mapping, a key twice: KM100–KM104), close it early with a `---`,
  lose a valid frontmatter or its workspace stamp, or carry a stamp no workspace can use (not one string,
  hostile: KM304), an empty stamp on a project fact or an episode (visible everywhere), or a stamp this
  workspace does not see (another repository's path, or a label: the memory would vanish from its
  writer) is refused with a sentence saying what to do instead. A memory that was already broken that
  way can still have its body edited.
"""

from __future__ import annotations

from ..sinks import prompt
from ..store.categories import PROJECT_FACT
from ..store.frontmatter import Entry, Frontmatter, parse_frontmatter
from ..store.stamps import looks_like_path, unsafe_stamp
from . import messages
from .commands.base import ToolFailure
from .visibility import foreign_stamp
from .write_rules import STAMPED

BROKEN = {
    "bare": "lose its `---` fences (its keys would be read as body text)",
    "unclosed": "lose its closing `---` fence",
    "yaml_error": "no longer parse as YAML",
    "not_mapping": "no longer be a list of `key: value` lines",
}
KEEP_WHOLE = "keep the `---` fences and the `key: value` lines whole"
STAMP_FORMS = "write one repository's absolute path, `global`, or a label such as team-infra as the stamp"


def _stamp_entry(fm: Frontmatter) -> Entry | None:
    return fm.get("workspace") if fm.status == "ok" else None


def _stamp(fm: Frontmatter) -> object:
    entry = _stamp_entry(fm)
    return None if entry is None else entry.value


def _duplicates(fm: Frontmatter) -> list[str]:
    keys = fm.keys if fm.status == "ok" else []
    return sorted({k for k in keys if keys.count(k) > 1})


def _category(fm: Frontmatter) -> str:
    entry = fm.get("category") if fm.status == "ok" else None
    value = entry.value if entry is not None else None
    return value.strip() if isinstance(value, str) else PROJECT_FACT  # the read-time fallback


def _span(fm: Frontmatter) -> str:
    return f"lines {fm.open_line + 1}–{fm.close_line + 1}"


def _fences(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.rstrip() == "---")


def _fence_problem(before: Frontmatter, after: Frontmatter, added_fence: bool = False) -> str | None:
    if after.status in BROKEN and before.status not in BROKEN:
        return BROKEN[after.status]
    if before.status == "ok" and after.status == "none":
        return "stop being the first lines of the file (it would be read as body text)"
    lost = set(before.keys) - set(after.keys) if before.status == after.status == "ok" else set()
    if lost and added_fence and after.close_line < before.close_line:
        return (
            f"end at line {after.close_line + 1}: a `---` there closes it early, and the keys below it "
            "would be read as body text"
        )
    return None


def _stamp_problem(
    before: Frontmatter, after: Frontmatter, active: tuple[str, ...]
) -> tuple[str, str] | None:
    """(what the edit would do to the stamp, what to do instead); None when the stamp stays sound."""
    for key in _duplicates(after):
        if key not in _duplicates(before):
            return (
                f"hold `{key}:` twice (only the first is read)",
                f"change the existing `{key}:` line instead",
            )
    old, new = _stamp_entry(before), _stamp_entry(after)
    if old is not None and new is None and after.status == "ok":
        return (
            "lose its `workspace:` stamp",
            "keep the `workspace:` line (`workspace: global` shares a memory)",
        )
    if new is None or (old is not None and (old.raw, old.value) == (new.raw, new.value)):
        return None
    value = new.value
    if new.is_scalar and value in (None, "") and _category(after) in STAMPED:
        return (
            "carry an empty `workspace:` stamp, which makes it visible in every repository",
            "leave the stamp as the store wrote it, or write `workspace: global` to share it",
        )
    if not new.is_string or not isinstance(value, str):
        shown = f" (`{prompt.field(new.raw[:80])}`)" if new.raw.strip() else ""
        return f"carry a workspace stamp that is not a single string{shown}", STAMP_FORMS
    unsafe = unsafe_stamp(value)
    if unsafe:
        return f"carry a workspace stamp that {unsafe}", STAMP_FORMS
    if foreign_stamp(value, active):
        return messages.foreign_what(prompt.field(value), looks_like_path(value)), messages.stamp_advice(
            prompt.field(active[0])
        )
    return None


def body_start(text: str) -> int:
    """The offset where the body starts (0 when the text has no valid frontmatter)."""
    fm = parse_frontmatter(text)
    if fm.status != "ok":
        return 0
    offset = 0
    for _ in range(fm.body_line):
        nl = text.find("\n", offset)
        if nl < 0:
            return len(text)
        offset = nl + 1
    return offset


def match_region(text: str, old: str) -> int:
    """Where str_replace looks for `old`: from the body's start when `old` occurs in the body, else 0."""
    start = body_start(text)
    return start if start and text.find(old, start) >= 0 else 0


def check_create(path: str, text: str, active: tuple[str, ...]) -> None:
    """Raises the refusal when the text `create` would write (the write-time rules applied) has a
    frontmatter the store cannot read or a stamp no workspace can use (see the module)."""
    before, after = parse_frontmatter(""), parse_frontmatter(text)
    problem = _fence_problem(before, after)
    if problem is not None:
        raise ToolFailure(
            f"Cannot create {path}: its frontmatter would {problem}. Write `key: value` lines between two "
            "`---` lines, or leave the frontmatter out and the store adds it."
        )
    stamp = _stamp_problem(before, after, active)
    if stamp is not None:
        raise ToolFailure(f"Cannot create {path}: its frontmatter would {stamp[0]}. Instead, {stamp[1]}.")


def check_edit(
    path: str, old_text: str, new_text: str, active: tuple[str, ...], *, insert_line: int = -1
) -> None:
    """Raises the refusal when the edit would break the memory's frontmatter or stamp (see the module)."""
    before, after = parse_frontmatter(old_text), parse_frontmatter(new_text)
    added_fence = _fences(new_text) > _fences(old_text)
    problem, advice = _fence_problem(before, after, added_fence), None
    if problem is None:
        stamp = _stamp_problem(before, after, active)
        if stamp is None:
            return
        problem, advice = stamp
    if before.status != "ok":
        tail = f" Instead, {advice}." if advice else ""
        raise ToolFailure(f"Cannot edit {path} this way: its frontmatter would {problem}.{tail}")
    body = before.close_line + 1
    where = (
        f"insert at line {body} or later to add to the body"
        if insert_line >= 0
        else f"{KEEP_WHOLE}, and edit the body (line {body + 1} on)"
    )
    what = f"insert at line {insert_line}" if insert_line >= 0 else "edit"
    raise ToolFailure(
        f"Cannot {what} in {path}: {_span(before)} are its frontmatter, which would {problem}. "
        f"To change the memory, {advice or where}."
    )
