"""What the MCP server declares: its tools' input schemas, its resource, its instructions."""

from __future__ import annotations

from typing import Any

from mcp import types

from .agents import MAX_SEARCH_RESULTS

MEMORY = "memory"
SEARCH = "memory_search"
PROMPT_BLOCK_URI = "memory://prompt-block"

INSTRUCTIONS = (
    "Persistent memory in markdown files under /memories, shared with the person's editor, where every "
    "change you make is reviewed. Read memory://prompt-block (or view /memories) at the start of a task; "
    "use memory_search to find what you remember about a subject; write with the memory tool."
)

# The Anthropic memory tool's input (memory_20250818): one object, `command` picks the parameters.
MEMORY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
            "description": "The operation to perform.",
        },
        "path": {
            "type": "string",
            "description": "A path under /memories (view, create, str_replace, insert, delete).",
        },
        "file_text": {"type": "string", "description": "create: the new file's content."},
        "old_str": {
            "type": "string",
            "description": "str_replace: the text to replace (must occur exactly once).",
        },
        "new_str": {"type": "string", "description": "str_replace: the replacement text."},
        "insert_line": {
            "type": "integer",
            "description": "insert: the line after which to insert (0: before the first).",
        },
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": "view: optional [start, end] line range, 1-based; end -1 reads to the end.",
        },
        "old_path": {"type": "string", "description": "rename: the current path."},
        "new_path": {"type": "string", "description": "rename: the new path."},
    },
    "required": ["command"],
}

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to recall, in words (a question works too)."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SEARCH_RESULTS,
            "description": "At most this many results (5).",
        },
    },
    "required": ["query"],
}


def tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=MEMORY,
            description=(
                "The memory tool: view, create, str_replace, insert, delete and rename files under "
                "/memories. Memory files are markdown with a frontmatter (category: project-fact, "
                "preference, episodic or session)."
            ),
            input_schema=MEMORY_SCHEMA,
            # It creates, overwrites, deletes and renames files in the person's store: a client should
            # ask before it runs (the store keeps every previous version, and the editor lists each change).
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
            ),
        ),
        types.Tool(
            name=SEARCH,
            description=(
                "Ranked recall over the memories this workspace sees: one line per memory (path, "
                "category, title) and a snippet."
            ),
            input_schema=SEARCH_SCHEMA,
            annotations=types.ToolAnnotations(
                read_only_hint=True, idempotent_hint=True, open_world_hint=False
            ),
        ),
    ]


def prompt_block_resource() -> types.Resource:
    return types.Resource(
        uri=PROMPT_BLOCK_URI,
        name="prompt-block",
        title="Memory prompt block",
        description=(
            "MEMORY.md, then the memories this workspace sees (its own and the preferences first, newest "
            "first), capped at 200 lines / 25 KB; a last line says how many were left out."
        ),
        mime_type="text/markdown",
    )
