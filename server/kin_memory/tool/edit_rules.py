"""Edits that cannot break a memory: what `str_replace` and `insert` may do to a file's frontmatter.

`create` puts `---`, `category:` and `workspace:` in front of a text that has none, and the model then
edits its own text counting lines and matching strings as it wrote them: an `insert` at line 0 pushed the
frontmatter into the body (the memory became a global project fact, never swept), an `insert` at line 1
put the model's line inside the YAML, and a `str_replace` of the repository path the model wrote matched
the stamp too ("Multiple occurrences"). So:

- a text that occurs in the body is matched in the body only; a match inside the frontmatter is taken
  only when the text occurs nowhere else (changing `category: episodic` on purpose still works);
- an edit whose result would newly break the frontmatter (bare keys, no closing fence, YAML that does not
  parse or is not a mapping: KM100–KM103), lose a valid frontmatter, drop the workspace stamp or stamp
  another repository's path is refused with a sentence saying which lines are the frontmatter and where
  to edit instead.
"""

from __future__ import annotations

from ..sinks import prompt
from ..store.frontmatter import Frontmatter, parse_frontmatter
from .commands.base import ToolFailure
from .visibility import foreign_stamp

BROKEN = {
    "bare": "lose its `---` fences (its keys would be read as body text)",
    "unclosed": "lose its closing `---` fence",
    "yaml_error": "no longer parse as YAML",
    "not_mapping": "no longer be a list of `key: value` lines",
}


def _stamp(fm: Frontmatter) -> object:
    entry = fm.get("workspace") if fm.status == "ok" else None
    return None if entry is None else entry.value


def _span(fm: Frontmatter) -> str:
    return f"lines {fm.open_line + 1}–{fm.close_line + 1}"


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


def _problem(before: Frontmatter, after: Frontmatter, active: tuple[str, ...]) -> str | None:
    if after.status in BROKEN and before.status not in BROKEN:
        return BROKEN[after.status]
    if before.status == "ok" and after.status == "none":
        return "stop being the first lines of the file (it would be read as body text)"
    old_stamp, new_stamp = _stamp(before), _stamp(after)
    if old_stamp is not None and new_stamp is None and after.status == "ok":
        return "lose its `workspace:` stamp"
    if new_stamp != old_stamp and foreign_stamp(new_stamp, active):
        return f"carry another repository's workspace, `{prompt.field(str(new_stamp))}`"
    return None


def check_edit(
    path: str, old_text: str, new_text: str, active: tuple[str, ...], *, insert_line: int = -1
) -> None:
    """Raises the refusal when the edit would break the memory's frontmatter (see the module)."""
    before, after = parse_frontmatter(old_text), parse_frontmatter(new_text)
    problem = _problem(before, after, active)
    if problem is None:
        return
    if before.status != "ok":
        raise ToolFailure(f"Cannot edit {path} this way: its frontmatter would {problem}.")
    body = before.close_line + 1
    where = (
        f"insert at line {body} or later to add to the body"
        if insert_line >= 0
        else f"keep the `---` fences and the `key: value` lines whole, and edit the body (line {body + 1} on)"
    )
    what = f"insert at line {insert_line}" if insert_line >= 0 else "edit"
    raise ToolFailure(
        f"Cannot {what} in {path}: {_span(before)} are its frontmatter, which would {problem}. "
        f"To change the memory, {where}."
    )
