"""The Anthropic SDK's own tool runner drives the guarded store through `kin_memory.agent.MemoryTool`,
against a scripted Anthropic server on 127.0.0.1: the scripted calls land in the store (write-time rules
applied), the model gets the reference strings (errors as is_error results), and every write is kept in
history labelled "agent" and queued for review."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
from fake_models import FakeModel, anthropic_end, anthropic_tool_use
from reflect_helpers import KEY

from kin_memory.agent import MemoryTool
from kin_memory.history import review
from kin_memory.history.query import history_of
from kin_memory.history.sync import catch_up


def tool_results(body: dict) -> list[dict]:
    last = body["messages"][-1]
    return [c for c in last["content"] if isinstance(c, dict) and c.get("type") == "tool_result"]


def text_of(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(c["text"] for c in content)


def test_the_sdk_tool_runner_writes_through_the_guard_with_history_labelled_agent(
    store: Path, workspace: str
):
    catch_up(store)  # the store as the editor last reviewed it
    new = "---\ncategory: project-fact\n---\n# API\n\nThe API listens on 8080.\n"
    steps = [
        anthropic_tool_use(
            {"command": "create", "path": "/memories/facts/api.md", "file_text": new},
            {
                "command": "str_replace",
                "path": "/memories/facts/deploy.md",
                "old_str": "Fridays",
                "new_str": "Tuesdays",
            },
        ),
        anthropic_tool_use(
            {"command": "view", "path": "/memories/../outside.md"},
            {"command": "create", "path": "/memories/facts/api.md", "file_text": "again"},
            {"command": "insert", "path": "/memories/prefs/tone.md", "insert_line": 99, "insert_text": "x"},
        ),
        anthropic_end("Remembered."),
    ]
    with FakeModel(steps) as fake:
        client = anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Remember the API port."}],
            tools=[MemoryTool(store, workspace)],
        )
        final = runner.until_done()
    assert final.content[0].text == "Remembered."
    assert fake.requests[0].body["tools"] == [{"type": "memory_20250818", "name": "memory"}]

    first = tool_results(fake.requests[1].body)
    assert [(text_of(r), r.get("is_error", False)) for r in first] == [
        (
            "File created successfully at: /memories/facts/api.md. The store added "
            f"`workspace: {workspace}` to your frontmatter, so your text after it now starts at line 5.",
            False,
        ),
        (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     5\t# Deploy\n     6\t\n     7\tWe deploy the billing service with blue-green releases on Tuesdays.\n"
            "     8\t",
            False,
        ),
    ]
    second = tool_results(fake.requests[2].body)
    assert [(text_of(r), r.get("is_error")) for r in second] == [
        ("Path /memories/../outside.md would escape /memories directory", True),
        ("File /memories/facts/api.md already exists", True),
        ("Invalid `insert_line` parameter: 99. It should be within the range [0, 4].", True),
    ]

    # Stamped with the workspace (the write-time rule for a project fact), byte for byte otherwise.
    assert (store / "facts" / "api.md").read_text() == (
        f"---\ncategory: project-fact\nworkspace: {workspace}\n---\n# API\n\nThe API listens on 8080.\n"
    )
    assert "on Tuesdays." in (store / "facts" / "deploy.md").read_text()
    assert [v.source for v in history_of(store, "/memories/facts/api.md")] == ["agent"]
    assert [v.source for v in history_of(store, "/memories/facts/deploy.md")] == ["agent", "external"]
    queued = {c.path: (c.kind, c.source) for c in review.changes(store)}
    assert queued == {
        "/memories/facts/api.md": ("created", "agent"),
        "/memories/facts/deploy.md": ("changed", "agent"),
    }
    audit = [json.loads(line) for line in (store / ".kin-index" / "audit.jsonl").read_text().splitlines()]
    writes = [(a["command"], a["outcome"], a["source"]) for a in audit]
    assert writes == [
        ("create", "ok", "agent"),
        ("str_replace", "ok", "agent"),
        ("create", "error", "agent"),
        ("insert", "error", "agent"),
    ]


def test_plan_mode_and_memory_disabled_refuse_writes_with_the_tools_messages(
    store: Path, workspace: str, tmp_path
):
    plan = MemoryTool(store, workspace, mode="plan")
    with FakeModel(
        [anthropic_tool_use({"command": "delete", "path": "/memories/prefs/tone.md"}), anthropic_end()]
    ) as fake:
        client = anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0)
        client.beta.messages.tool_runner(
            model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "x"}], tools=[plan]
        ).until_done()
    [result] = tool_results(fake.requests[1].body)
    assert (text_of(result), result["is_error"]) == (
        "Memory tool is in plan mode: delete is not allowed (view only)",
        True,
    )
    assert (store / "prefs" / "tone.md").exists()

    project = Path(workspace) / ".kin"
    project.mkdir()
    (project / "settings.toml").write_text("memory_enabled = false\n")
    off = MemoryTool(store, workspace)
    try:
        off.call({"command": "view", "path": "/memories"})
    except anthropic.lib.tools.ToolError as exc:
        assert exc.content == f"Memory is disabled (memory_enabled = false in {project / 'settings.toml'})"
    else:
        raise AssertionError("a disabled store answered")


def test_strict_mode_asks_the_callback_before_each_write(store: Path, workspace: str):
    asked: list[str] = []
    tool = MemoryTool(store, workspace, mode="strict", confirm=lambda q: asked.append(q) or False)
    try:
        tool.call({"command": "delete", "path": "/memories/prefs/tone.md"})
    except anthropic.lib.tools.ToolError as exc:
        assert exc.content == "The user declined the delete of /memories/prefs/tone.md"
    assert asked == ["delete /memories/prefs/tone.md"]
    assert (store / "prefs" / "tone.md").exists()
    yes = MemoryTool(store, workspace, mode="strict", confirm=lambda q: True)
    assert yes.call({"command": "delete", "path": "/memories/prefs/tone.md"}) == (
        "Successfully deleted /memories/prefs/tone.md"
    )


def test_the_sdk_async_tool_runner_takes_the_async_memory_tool(store: Path, workspace: str):
    import asyncio

    from kin_memory.agent import AsyncMemoryTool

    new = "---\ncategory: project-fact\n---\n# Cache\n\nThe cache is Redis.\n"
    steps = [
        anthropic_tool_use({"command": "create", "path": "/memories/facts/cache.md", "file_text": new}),
        anthropic_tool_use({"command": "view", "path": "/memories/facts/none.md"}),
        anthropic_end("Done."),
    ]

    async def run() -> str:
        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=fake.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Remember the cache."}],
            tools=[AsyncMemoryTool(store, workspace)],
        )
        final = await runner.until_done()
        return final.content[0].text

    with FakeModel(steps) as fake:
        assert asyncio.run(run()) == "Done."
    assert fake.requests[0].body["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert [(text_of(r), r.get("is_error", False)) for r in tool_results(fake.requests[1].body)] == [
        (
            "File created successfully at: /memories/facts/cache.md. The store added "
            f"`workspace: {workspace}` to your frontmatter, so your text after it now starts at line 5.",
            False,
        )
    ]
    missing = tool_results(fake.requests[2].body)
    assert missing[0].get("is_error") is True and "does not exist" in text_of(missing[0])
    assert (store / "facts" / "cache.md").read_text().startswith("---\ncategory: project-fact\n")
    assert [v.source for v in history_of(store, "/memories/facts/cache.md")][0] == "agent"


def _session_results(tool, fake_steps) -> list[list[tuple[str, bool]]]:
    with FakeModel(fake_steps) as fake:
        client = anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Keep notes."}],
            tools=[tool],
        )
        runner.until_done()
    return [
        [(text_of(r), bool(r.get("is_error", False))) for r in tool_results(req.body)]
        for req in fake.requests[1:]
    ]


def test_a_scripted_session_gets_what_the_sdks_reference_memory_tool_gives(tmp_path: Path):
    """The SDK's own local-filesystem memory tool and `MemoryTool` run the same scripted session through
    the SDK's tool runner: wherever kin adds nothing (a preference, which is never stamped, written with
    its frontmatter; the operator's view), every result string is the reference's. Where kin differs on
    purpose it is not scripted here: a folder listing's sizes (kin counts the files below a folder, as
    `du` does; the reference shows the folder entry's own size), the write-time category and stamp, and
    the refusals of edits that would break a frontmatter."""
    from anthropic.tools import BetaLocalFilesystemMemoryTool

    pref = "---\ncategory: preference\n---\n# Reviews\n\nBlake prefers squash merges.\nSmall PRs.\n"
    script = [
        [{"command": "create", "path": "/memories/prefs/reviews.md", "file_text": pref}],
        [
            {"command": "view", "path": "/memories/prefs/reviews.md"},
            {"command": "view", "path": "/memories/prefs/reviews.md", "view_range": [4, -1]},
            {"command": "create", "path": "/memories/prefs/reviews.md", "file_text": "again"},
        ],
        [
            {
                "command": "str_replace",
                "path": "/memories/prefs/reviews.md",
                "old_str": "squash",
                "new_str": "rebase",
            },
            {
                "command": "str_replace",
                "path": "/memories/prefs/reviews.md",
                "old_str": "absent",
                "new_str": "x",
            },
            {"command": "str_replace", "path": "/memories/prefs/reviews.md", "old_str": "s", "new_str": "z"},
            {
                "command": "insert",
                "path": "/memories/prefs/reviews.md",
                "insert_line": 6,
                "insert_text": "Tests first.",
            },
            {
                "command": "insert",
                "path": "/memories/prefs/reviews.md",
                "insert_line": 99,
                "insert_text": "x",
            },
        ],
        [
            {"command": "view", "path": "/memories/missing.md"},
            {"command": "view", "path": "/memories/../etc/passwd"},
            {
                "command": "rename",
                "old_path": "/memories/prefs/reviews.md",
                "new_path": "/memories/prefs/code-review.md",
            },
            {"command": "rename", "old_path": "/memories/prefs/gone.md", "new_path": "/memories/prefs/x.md"},
            {"command": "view", "path": "/memories/prefs/code-review.md"},
            {"command": "delete", "path": "/memories/prefs/code-review.md"},
            {"command": "delete", "path": "/memories/prefs/code-review.md"},
            {"command": "delete", "path": "/memories"},
        ],
    ]
    steps = [anthropic_tool_use(*calls) for calls in script] + [anthropic_end("Done.")]
    reference = _session_results(BetaLocalFilesystemMemoryTool(str(tmp_path / "ref")), steps)
    store = tmp_path / "kin"
    store.mkdir()
    ours = _session_results(MemoryTool(store, "none"), steps)
    assert ours == reference
    assert sum(len(r) for r in ours) == sum(len(c) for c in script)
    assert any(err for results in ours for _, err in results) and any(
        not err for results in ours for _, err in results
    )


EDIT_STEPS = [
    anthropic_tool_use(
        {"command": "create", "path": "/memories/steps.md", "file_text": "l1\nl2\nl3\nl4\nl5\nl6\n"}
    ),
    anthropic_tool_use(
        {"command": "insert", "path": "/memories/steps.md", "insert_line": 10, "insert_text": "l7"}
    ),
    anthropic_tool_use(
        {
            "command": "insert",
            "path": "/memories/steps.md",
            "insert_line": 2,
            "insert_text": "workspace: /other",
        }
    ),
    anthropic_end("Done."),
]


def _check_edit_session(fake: FakeModel, store: Path, workspace: str) -> None:
    created = tool_results(fake.requests[1].body)[0]
    assert text_of(created).endswith("above your text, so your first line is now line 5.")
    assert tool_results(fake.requests[2].body)[0].get("is_error", False) is False
    refused = tool_results(fake.requests[3].body)[0]
    assert refused.get("is_error") is True and "`workspace:` twice" in text_of(refused)
    assert (
        store / "steps.md"
    ).read_text() == f"---\ncategory: episodic\nworkspace: {workspace}\n---\n" + "".join(
        f"l{n}\n" for n in range(1, 8)
    )


def test_both_runners_get_where_the_text_starts_and_a_broken_stamp_refused(store: Path, workspace: str):
    import asyncio

    from kin_memory.agent import AsyncMemoryTool

    with FakeModel(EDIT_STEPS) as fake:
        client = anthropic.Anthropic(api_key=KEY, base_url=fake.url, max_retries=0)
        client.beta.messages.tool_runner(
            model="claude-test", max_tokens=1024, messages=[{"role": "user", "content": "Note the steps."}],
            tools=[MemoryTool(store, workspace)],
        ).until_done()  # fmt: skip
    _check_edit_session(fake, store, workspace)
    (store / "steps.md").unlink()

    async def run() -> None:
        client = anthropic.AsyncAnthropic(api_key=KEY, base_url=fake.url, max_retries=0)
        await client.beta.messages.tool_runner(
            model="claude-test", max_tokens=1024, messages=[{"role": "user", "content": "Note the steps."}],
            tools=[AsyncMemoryTool(store, workspace)],
        ).until_done()  # fmt: skip

    with FakeModel(EDIT_STEPS) as fake:
        asyncio.run(run())
    _check_edit_session(fake, store, workspace)
