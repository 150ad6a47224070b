"""Every result and error string of the memory tool (reference/memory-tool.md, exact)."""

from __future__ import annotations

SYMLINK_ESCAPE = "Path would escape /memories directory via symlink"
DELETE_ROOT = "Cannot delete the /memories directory itself"
RENAME_ROOT = "Cannot rename the /memories directory itself"
STR_REPLACE_OK_HEADER = (
    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
)


def missing_prefix(path: str) -> str:
    return f"Path must start with /memories, got: {path}"


def traversal(path: str) -> str:
    return f"Path {path} would escape /memories directory"


def not_found(path: str) -> str:
    return f"The path {path} does not exist. Please provide a valid path."


def not_a_file(path: str) -> str:
    return f"The path {path} is not a file."


def too_many_lines(path: str) -> str:
    return f"File {path} exceeds maximum line limit of 999,999 lines."


def create_ok(path: str) -> str:
    return f"File created successfully at: {path}"


def create_exists(path: str) -> str:
    return f"File {path} already exists"


def no_match(old_str: str, path: str) -> str:
    return f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}."


def multiple(old_str: str, lines: list[int]) -> str:
    joined = ", ".join(str(n) for n in lines)
    return (
        f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {joined}. "
        "Please ensure it is unique"
    )


def bad_insert_line(n: object, length: int) -> str:
    return f"Invalid `insert_line` parameter: {n}. It should be within the range [0, {length}]."


def insert_ok(path: str) -> str:
    return f"The file {path} has been edited."


def delete_missing(path: str) -> str:
    return f"The path {path} does not exist"


def delete_ok(path: str) -> str:
    return f"Successfully deleted {path}"


def rename_exists(new_path: str) -> str:
    return f"The destination {new_path} already exists"


def rename_missing(old_path: str) -> str:
    return f"The path {old_path} does not exist"


def rename_ok(old_path: str, new_path: str) -> str:
    return f"Successfully renamed {old_path} to {new_path}"


def vanished(path: str) -> str:
    return f"The file {path} no longer exists (may have been deleted or renamed concurrently)."


def not_utf8(path: str) -> str:
    return f"The file {path} is not a valid UTF-8 text file and cannot be read as memory."


def unsupported(path: str) -> str:
    return f"Unsupported file type for {path}"


def dir_header(path: str) -> str:
    return f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"


def file_header(path: str) -> str:
    return f"Here's the content of {path} with line numbers:"


def plan_mode(command: str) -> str:
    return f"Memory tool is in plan mode: {command} is not allowed (view only)"


def declined(command: str, path: str) -> str:
    return f"The user declined the {command} of {path}"


def disabled(disabled_by: object) -> str:
    return f"Memory is disabled (memory_enabled = false in {disabled_by})"


def conflict(path: str) -> str:
    return f"The file {path} changed while it was being edited; no replacement was performed."


def unknown_command(command: object) -> str:
    return f"Unknown command: {command!r}. Expected one of: view, create, str_replace, insert, delete, rename"


def missing_param(command: str, param: str) -> str:
    return f"Missing required parameter `{param}` for command {command}"


def bad_param(command: str, param: str, expected: str) -> str:
    return f"Invalid parameter `{param}` for command {command}: expected {expected}"


def os_error(path: str, what: str) -> str:
    return f"Could not {what} {path}: the operation failed on the memory store"


def unsaved(path: str) -> str:
    return (
        f"The file {path} has unsaved changes in the editor; no edit was performed. Save or revert it first."
    )


def editor_refused(path: str) -> str:
    return f"The editor did not apply the edit to {path}; no edit was performed."


# -- beyond the reference: limits the reference does not have (new strings; the ones above are exact)


def too_deep(path: str, limit: int) -> str:
    return (
        f"Path {path} is nested too deeply: memories may be at most {limit} folders below /memories "
        "(deeper files are never scanned, indexed or recalled)"
    )


def view_capped(path: str, size: str, cap: str, last_line: int) -> str:
    return (
        f"[Only the first {cap} of {path} are shown (lines 1-{last_line}): the file is {size}, "
        f"and memory reads stop at {cap}. Lines past that cannot be viewed; split or shorten the file.]"
    )


def too_large_to_edit(path: str, size: str, limit: str) -> str:
    return f"The file {path} is {size}: too large to edit with the memory tool (the limit is {limit})."


def too_large_to_write(path: str, size: str, limit: str) -> str:
    return f"The file {path} would be {size}: too large for the memory tool (the limit is {limit}). Nothing was written."


def cannot_ask(command: str, path: str) -> str:
    """Strict mode with a caller that has no way to ask the user (an MCP client without elicitation)."""
    return f"Memory tool is in strict mode and this client cannot ask the user: the {command} of {path} was not made"


def folder_holds_hidden(path: str, command: str) -> str:
    return (
        f"Cannot {command} {path}: it holds memories of other workspaces, which this workspace cannot "
        f"change. {command.capitalize()} its memories one by one instead."
    )


def foreign_what(stamp: str, is_path: bool) -> str:
    """What a write carrying a stamp the writing workspace does not see would do (the end of a sentence
    starting "its frontmatter would")."""
    if is_path:
        return f"carry another repository's workspace, `{stamp}`"
    return f"carry the label `{stamp}`, which this workspace does not see: the memory would vanish from it"


def stamp_advice(active: str) -> str:
    return f"stamp it `{active}` (this workspace) or `global`, or leave the stamp out and the store adds it"


def foreign_stamp(path: str, stamp: str, active: str, is_path: bool = True) -> str:
    if is_path:
        return (
            f"Cannot write {path} with `workspace: {stamp}`: that is another repository's workspace. "
            f"Stamp it `{active}` (this workspace) or `global`, or leave the stamp out and the store adds it."
        )
    return (
        f"Cannot write {path} with `workspace: {stamp}`: this workspace does not see that label, so the "
        f"memory would vanish from it. Stamp it `{active}` (this workspace) or `global`, or leave the stamp "
        "out and the store adds it."
    )


def cancelled(command: str, path: str) -> str:
    return f"The {command} of {path} was cancelled before it began: nothing was written"
