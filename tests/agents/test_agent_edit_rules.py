"""Every edit lands where the agent means or is refused with a sentence saying what to do, in every door
(the core call, the command line through a pipe, the SDK's `MemoryTool`, the official MCP client and
the language server's `kin.memory.tool`).

- `create` of a text without frontmatter says what the store added and the line the agent's text now
  starts at, so an `insert` counted from that lands after the agent's own line;
- no edit leaves a second stamp, a stamp that is not one string, a frontmatter that is not a mapping or
  an empty stamp on a project fact or an episode; a `---` inserted into the frontmatter is refused for
  what it does (closes it early), and `<this repository>/.` is this repository.
"""

from __future__ import annotations

import pytest

from agents.test_tool_workspaces import DOORS, door, world  # noqa: F401 - the fixture is used by name

MEMORY = "/memories/notes/steps.md"
AGENT_TEXT = "l1\nl2\nl3\nl4\nl5\nl6\n"


@pytest.mark.parametrize("name", DOORS)
def test_the_create_result_says_where_the_agents_text_now_starts(world, name: str) -> None:  # noqa: F811
    root, home, _a, b_real = world
    with door(name, root, home, b_real) as call:
        text, err = call({"command": "create", "path": MEMORY, "file_text": AGENT_TEXT})
        assert not err
        assert text == (
            f"File created successfully at: {MEMORY}. The store added 4 lines of frontmatter "
            f"(`category: episodic` and `workspace: {b_real}`) above your text, so your first line is now "
            "line 5."
        )
        # the agent's line 6 is line 10 now: an insert after it lands after `l6`
        assert call({"command": "insert", "path": MEMORY, "insert_line": 10, "insert_text": "l7"})[1] is False
        # a text the store adds nothing to gets the reference's exact string
        own = f"---\ncategory: project-fact\nworkspace: {b_real}\n---\n# Own\n"
        assert call({"command": "create", "path": "/memories/notes/own.md", "file_text": own}) == (
            "File created successfully at: /memories/notes/own.md",
            False,
        )
    assert (root / "notes" / "steps.md").read_text().endswith("l5\nl6\nl7\n")


def _refused(call, inp: dict, *words: str) -> str:
    text, err = call(inp)
    assert err, (inp, text)
    for word in words:
        assert word in text, (word, text)
    return text


@pytest.mark.parametrize("name", DOORS)
def test_no_edit_leaves_a_broken_stamp_or_frontmatter(world, name: str) -> None:  # noqa: F811
    root, home, a_real, b_real = world
    stored_path = root / "notes" / "steps.md"
    with door(name, root, home, b_real) as call:
        assert call({"command": "create", "path": MEMORY, "file_text": AGENT_TEXT})[1] is False
        stored = stored_path.read_text()
        _refused(
            call,
            {"command": "insert", "path": MEMORY, "insert_line": 2, "insert_text": f"workspace: {a_real}"},
            "`workspace:` twice",
            "change the existing `workspace:` line",
        )
        for value in ("[a, b]", "42", "true", "{x: 1}"):
            _refused(
                call,
                {
                    "command": "str_replace",
                    "path": MEMORY,
                    "old_str": f"workspace: {b_real}",
                    "new_str": f"workspace: {value}",
                },  # fmt: skip
                "not a single string",
                "absolute path, `global`, or a label",
            )
        for value in ("", "null", "~"):
            _refused(
                call,
                {
                    "command": "str_replace",
                    "path": MEMORY,
                    "old_str": f"workspace: {b_real}",
                    "new_str": f"workspace: {value}".rstrip(),
                },  # fmt: skip
                "empty `workspace:` stamp",
                "`workspace: global`",
            )
        text = _refused(
            call,
            {"command": "insert", "path": MEMORY, "insert_line": 1, "insert_text": "---"},
            "closes it early",
        )
        assert "lose its `workspace:` stamp" not in text
        _refused(
            call,
            {
                "command": "str_replace",
                "path": MEMORY,
                "old_str": "category: episodic",
                "new_str": "- episodic",
            },
            "no longer parse as YAML",
        )
        _refused(
            call,
            {
                "command": "str_replace",
                "path": MEMORY,
                "old_str": f"workspace: {b_real}",
                "new_str": "workspace: team-infra",
            },  # fmt: skip
            "does not see",
        )
        assert stored_path.read_text() == stored
        for bad in ("---\n- a\n- b\n---\nx\n", "---\ncategory: project-fact\nworkspace:\n---\nx\n",
                    "---\ncategory: episodic\nworkspace: null\n---\nx\n",
                    "---\ncategory: episodic\nworkspace: [a, b]\n---\nx\n",
                    f"---\ncategory: episodic\nworkspace: {b_real}\nworkspace: {b_real}\n---\nx\n"):  # fmt: skip
            _refused(
                call,
                {"command": "create", "path": "/memories/notes/bad.md", "file_text": bad},
                "Cannot create",
            )
        assert not (root / "notes" / "bad.md").exists()
        # `<this repository>/.` names this repository: not refused as another one's
        text, err = call(
            {
                "command": "str_replace",
                "path": MEMORY,
                "old_str": f"workspace: {b_real}",
                "new_str": f"workspace: {b_real}/.",
            }  # fmt: skip
        )
        assert not err, text
        listing, _ = call({"command": "view", "path": "/memories/notes"})
        assert "steps.md" in listing
