"""The diagnostic catalog: every code, its default severity and what it means."""

from __future__ import annotations

ERROR, WARNING, INFORMATION, HINT = "error", "warning", "information", "hint"

CATALOG: dict[str, tuple[str, str]] = {
    "KM100": (WARNING, "bare `key: value` first line without fences: read as content"),
    "KM101": (ERROR, "opening `---` without a closing fence"),
    "KM102": (ERROR, "frontmatter YAML does not parse"),
    "KM103": (ERROR, "frontmatter is not a mapping"),
    "KM104": (ERROR, "duplicate key"),
    "KM105": (HINT, "key not known to the store"),
    "KM106": (INFORMATION, "no frontmatter: read as project-fact"),
    "KM200": (INFORMATION, "`category` missing: read as project-fact"),
    "KM201": (WARNING, "unrecognized category"),
    "KM202": (WARNING, "category differs from a valid value only in case, whitespace or quoting"),
    "KM203": (ERROR, "category is not a string"),
    "KM300": (INFORMATION, "project-fact/episodic without `workspace`: global, visible everywhere"),
    "KM301": (WARNING, "`workspace` path no longer exists: the memory goes quiet"),
    "KM302": (WARNING, "`workspace` path is not canonical: never matches a realpath"),
    "KM303": (HINT, "belongs to another workspace: not visible from the active one"),
    "KM304": (ERROR, "hostile or invalid workspace stamp"),
    "KM305": (WARNING, "stamped with a linked worktree instead of its main working tree"),
    "KM306": (HINT, "preference carries a workspace stamp"),
    "KM307": (INFORMATION, "stamped with a folder inside a repository instead of the repository's top level"),
    "KM400": (WARNING, "project-fact untouched too long: stale, review it"),
    "KM401": (INFORMATION, "episodic memory expires soon"),
    "KM402": (WARNING, "episodic memory expired: the next sweep deletes it"),
    "KM403": (INFORMATION, "session file expires within the day"),
    "KM404": (WARNING, "session file expired"),
    "KM500": (WARNING, "MEMORY.md lines past the 200-line cap of the prompt block"),
    "KM501": (WARNING, "MEMORY.md content past the 25 KB cap of the prompt block"),
    "KM502": (WARNING, "MEMORY.md links to a memory that does not exist"),
    "KM600": (WARNING, "memory body over 64 KB: body reads are capped"),
    "KM601": (INFORMATION, "near-duplicate of another visible memory"),
    "KM602": (WARNING, "looks like a secret: memories are inlined into prompts"),
    "KM603": (ERROR, "not valid UTF-8, or contains NUL bytes"),
    "KM604": (HINT, "may contradict another visible memory (same subject, another value)"),
    "KM700": (WARNING, "project settings set `memory_dir` (global-only, ignored)"),
    "KM701": (ERROR, "settings TOML does not parse or has a wrong value type"),
    "KM800": (WARNING, "changed on two machines at once: the file keeps one version, the other is on record"),
    "KM900": (WARNING, "file could not be read"),
    "KM901": (WARNING, "suppression directive names an unknown code"),
}


def default_severity(code: str) -> str:
    return CATALOG.get(code, (WARNING, ""))[0]
