from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from kin_memory.tool import messages
from kin_memory.tool.commands import ToolContext, run_tool, writing
from kin_memory.tool.commands import create as create_module
from kin_memory.tool.commands import delete as delete_module
from kin_memory.tool.commands import rename as rename_module
from kin_memory.tool.commands import view as view_module
from kin_memory.tool.commands.listing import format_size


def ok(res) -> str:
    assert not res.is_error, res.content
    return res.content


def err(res) -> str:
    assert res.is_error, res.content
    return res.content


# ------------------------------------------------------------------ view


def test_size_format():
    assert format_size(0) == "0B"
    assert format_size(4096) == "4K"
    assert format_size(1536) == "1.5K"
    assert format_size(3 * 1024 * 1024) == "3M"
    assert format_size(100) == "100B"


def test_view_empty_store(run, root):
    assert ok(run(command="view", path="/memories")) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n"
        "0B\t/memories"
    )


def test_view_missing_root_is_not_an_error(tmp_path):
    res = run_tool({"command": "view", "path": "/memories"}, ToolContext(root=tmp_path / "nope"))
    assert ok(res).endswith("0B\t/memories")


def test_view_directory_two_levels_hidden_skipped(run, root):
    (root / "a").mkdir()
    (root / "a" / "b").mkdir()
    (root / "a" / "b" / "deep.md").write_bytes(b"x" * 10)
    (root / "a" / "one.md").write_bytes(b"y" * 1536)
    (root / "z.md").write_bytes(b"z" * 4096)
    (root / ".kin-index").mkdir()
    (root / ".hidden.md").write_text("h")
    (root / "a" / ".secret").write_text("s")
    out = ok(run(command="view", path="/memories"))
    assert out.split("\n") == [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
        f"{format_size(10 + 1536 + 4096)}\t/memories",
        f"{format_size(1546)}\t/memories/a/",
        "10B\t/memories/a/b/",
        "1.5K\t/memories/a/one.md",
        "4K\t/memories/z.md",
    ]


def test_view_subdirectory(run, root):
    (root / "a").mkdir()
    (root / "a" / "x.md").write_text("")
    out = ok(run(command="view", path="/memories/a"))
    assert out.split("\n")[1:] == ["0B\t/memories/a", "0B\t/memories/a/x.md"]


def test_view_file_line_numbers(run, root):
    (root / "f.md").write_text("first line\nsecond line")
    assert ok(run(command="view", path="/memories/f.md")) == (
        "Here's the content of /memories/f.md with line numbers:\n     1\tfirst line\n     2\tsecond line"
    )


def test_view_crlf_and_trailing_newline(run, root):
    (root / "f.md").write_bytes(b"line1\r\nline2\r\nline3\r\n")
    out = ok(run(command="view", path="/memories/f.md"))
    assert out.split("\n")[1:] == ["     1\tline1\r", "     2\tline2\r", "     3\tline3\r", "     4\t"]


def test_view_range(run, root):
    (root / "f.md").write_text("a\nb\nc\nd")
    assert ok(run(command="view", path="/memories/f.md", view_range=[2, 3])).split("\n")[1:] == [
        "     2\tb",
        "     3\tc",
    ]
    assert ok(run(command="view", path="/memories/f.md", view_range=[3, -1])).split("\n")[1:] == [
        "     3\tc",
        "     4\td",
    ]
    assert ok(run(command="view", path="/memories/f.md", view_range=[0, 1])).split("\n")[1:] == ["     1\ta"]


def test_view_width_six(run, root):
    (root / "f.md").write_text("\n".join(str(i) for i in range(1, 12)))
    lines = ok(run(command="view", path="/memories/f.md")).split("\n")
    assert lines[10] == "    10\t10"


def test_view_missing_and_invalid_utf8(run, root):
    assert err(run(command="view", path="/memories/no.md")) == messages.not_found("/memories/no.md")
    assert messages.not_found("/x") == "The path /x does not exist. Please provide a valid path."
    (root / "bin.md").write_bytes(b"\xff\xfe")
    assert err(run(command="view", path="/memories/bin.md")) == (
        "The file /memories/bin.md is not a valid UTF-8 text file and cannot be read as memory."
    )


def test_view_unsupported(run, root):
    os.mkfifo(root / "fifo")
    assert err(run(command="view", path="/memories/fifo")) == "Unsupported file type for /memories/fifo"


def test_view_too_many_lines(run, root):
    (root / "big.md").write_text("\n" * 999_999)
    assert err(run(command="view", path="/memories/big.md")) == (
        "File /memories/big.md exceeds maximum line limit of 999,999 lines."
    )


# ------------------------------------------------------------------ create


def test_create_plain_file_verbatim_and_modes(run, root):
    old = os.umask(0o022)
    try:
        assert ok(run(command="create", path="/memories/a/b/notes.txt", file_text="hi\r\n")) == (
            "File created successfully at: /memories/a/b/notes.txt"
        )
    finally:
        os.umask(old)
    f = root / "a" / "b" / "notes.txt"
    assert f.read_bytes() == b"hi\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "a" / "b").stat().st_mode) == 0o700
    assert not [p for p in (root / "a" / "b").iterdir() if p.name.startswith(".kin-tmp")]


def test_create_exists(run, root):
    (root / "x.md").write_text("keep")
    assert (
        err(run(command="create", path="/memories/x.md", file_text="n"))
        == "File /memories/x.md already exists"
    )
    assert (root / "x.md").read_text() == "keep"


def test_create_memory_applies_rules(root):
    ctx = ToolContext(root=root, workspace="/repo/w")
    ok(run_tool({"command": "create", "path": "/memories/m.md", "file_text": "body\n"}, ctx))
    assert (root / "m.md").read_text() == "---\ncategory: episodic\nworkspace: /repo/w\n---\nbody\n"


def test_create_root_memory_index_verbatim(root):
    ctx = ToolContext(root=root, workspace="/repo/w")
    ok(run_tool({"command": "create", "path": "/memories/MEMORY.md", "file_text": "# index\n"}, ctx))
    assert (root / "MEMORY.md").read_text() == "# index\n"
    ok(run_tool({"command": "create", "path": "/memories/sub/MEMORY.md", "file_text": "x"}, ctx))
    assert (root / "sub" / "MEMORY.md").read_text().startswith("---\ncategory: episodic\n")


def test_create_under_file_parent_maps_error(run, root):
    (root / "f").write_text("x")
    msg = err(run(command="create", path="/memories/f/g.md", file_text="x"))
    assert str(root) not in msg and "/memories/f/g.md" in msg


# ------------------------------------------------------------------ str_replace


def test_str_replace_snippet(run, root):
    (root / "f.md").write_text("Line 1\nOld Text\nLine 3")
    assert ok(run(command="str_replace", path="/memories/f.md", old_str="Old", new_str="New")) == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tLine 1\n     2\tNew Text\n     3\tLine 3"
    )
    assert (root / "f.md").read_text() == "Line 1\nNew Text\nLine 3"


def test_str_replace_snippet_window(run, root):
    (root / "f.md").write_text("\n".join(f"l{i}" for i in range(1, 11)))
    out = ok(run(command="str_replace", path="/memories/f.md", old_str="l5", new_str="X"))
    assert out.split("\n")[1:] == ["     3\tl3", "     4\tl4", "     5\tX", "     6\tl6", "     7\tl7"]


def test_str_replace_no_match_and_multiple(run, root):
    (root / "f.md").write_text("a x\nb\nc x\n")
    assert err(run(command="str_replace", path="/memories/f.md", old_str="zz", new_str="")) == (
        "No replacement was performed, old_str `zz` did not appear verbatim in /memories/f.md."
    )
    assert err(run(command="str_replace", path="/memories/f.md", old_str="x", new_str="y")) == (
        "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. Please ensure it is unique"
    )


def test_str_replace_omitted_new_str_deletes_and_keeps_crlf(run, root):
    (root / "f.md").write_bytes(b"keep\r\ndrop me\r\nend\r\n")
    ok(run(command="str_replace", path="/memories/f.md", old_str="drop me\r\n"))
    assert (root / "f.md").read_bytes() == b"keep\r\nend\r\n"


def test_str_replace_missing_and_directory(run, root):
    (root / "d").mkdir()
    assert err(run(command="str_replace", path="/memories/no.md", old_str="a", new_str="b")) == (
        messages.not_found("/memories/no.md")
    )
    assert err(run(command="str_replace", path="/memories/d", old_str="a", new_str="b")) == (
        "The path /memories/d is not a file."
    )


def test_str_replace_keeps_mode(run, root):
    f = root / "f.md"
    f.write_text("abc")
    f.chmod(0o600)
    ok(run(command="str_replace", path="/memories/f.md", old_str="b", new_str="B"))
    assert stat.S_IMODE(f.stat().st_mode) == 0o600


def test_str_replace_conflict_detected(run, root, monkeypatch):
    f = root / "f.md"
    f.write_text("one two")

    def meddle(path: Path) -> None:
        path.write_text("someone else's edit, longer")

    monkeypatch.setattr(writing, "before_commit", meddle)
    assert err(run(command="str_replace", path="/memories/f.md", old_str="one", new_str="1")) == (
        "The file /memories/f.md changed while it was being edited; no replacement was performed."
    )
    assert f.read_text() == "someone else's edit, longer"


def test_str_replace_vanished(run, root, monkeypatch):
    f = root / "f.md"
    f.write_text("one two")
    monkeypatch.setattr(writing, "before_commit", lambda path: path.unlink())
    assert err(run(command="str_replace", path="/memories/f.md", old_str="one", new_str="1")) == (
        "The file /memories/f.md no longer exists (may have been deleted or renamed concurrently)."
    )


# ------------------------------------------------------------------ insert


@pytest.mark.parametrize(
    ("before", "line", "text", "after"),
    [
        ("Line 1\nLine 2", 1, "Inserted Line", "Line 1\nInserted Line\nLine 2\n"),
        ("Line 1\nLine 2", 0, "First Line", "First Line\nLine 1\nLine 2\n"),
        ("line1\r\nline2\r\nline3\r\n", 1, "Inserted", "line1\r\nInserted\nline2\r\nline3\r\n"),
        ("a\n", 1, "b\n", "a\nb\n"),
        ("", 0, "only", "only\n"),
    ],
)
def test_insert_examples(run, root, before, line, text, after):
    (root / "f.md").write_bytes(before.encode())
    assert ok(run(command="insert", path="/memories/f.md", insert_line=line, insert_text=text)) == (
        "The file /memories/f.md has been edited."
    )
    assert (root / "f.md").read_bytes() == after.encode()


def test_insert_bad_line(run, root):
    (root / "f.md").write_text("a\nb\n")
    assert err(run(command="insert", path="/memories/f.md", insert_line=3, insert_text="x")) == (
        "Invalid `insert_line` parameter: 3. It should be within the range [0, 2]."
    )
    assert err(run(command="insert", path="/memories/f.md", insert_line=-1, insert_text="x")) == (
        "Invalid `insert_line` parameter: -1. It should be within the range [0, 2]."
    )
    assert err(run(command="insert", path="/memories/no.md", insert_line=0, insert_text="x")) == (
        messages.not_found("/memories/no.md")
    )


# ------------------------------------------------------------------ delete / rename


def test_delete(run, root):
    (root / "f.md").write_text("x")
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "e" / "g.md").write_text("x")
    assert ok(run(command="delete", path="/memories/f.md")) == "Successfully deleted /memories/f.md"
    assert ok(run(command="delete", path="/memories/d")) == "Successfully deleted /memories/d"
    assert not (root / "d").exists() and not (root / "f.md").exists()
    assert err(run(command="delete", path="/memories/f.md")) == "The path /memories/f.md does not exist"
    assert err(run(command="delete", path="/memories")) == "Cannot delete the /memories directory itself"
    assert err(run(command="delete", path="/memories/")) == "Cannot delete the /memories directory itself"
    assert root.is_dir()


def test_delete_symlink_removes_link_only(run, root):
    (root / "real.md").write_text("x")
    (root / "link.md").symlink_to(root / "real.md")
    ok(run(command="delete", path="/memories/link.md"))
    assert (root / "real.md").exists() and not os.path.lexists(root / "link.md")


def test_rename(run, root):
    (root / "a.md").write_text("x")
    (root / "b.md").write_text("y")
    assert err(run(command="rename", old_path="/memories/a.md", new_path="/memories/b.md")) == (
        "The destination /memories/b.md already exists"
    )
    assert err(run(command="rename", old_path="/memories/no.md", new_path="/memories/c.md")) == (
        "The path /memories/no.md does not exist"
    )
    assert ok(run(command="rename", old_path="/memories/a.md", new_path="/memories/n/e/w.md")) == (
        "Successfully renamed /memories/a.md to /memories/n/e/w.md"
    )
    assert (root / "n" / "e" / "w.md").read_text() == "x"
    assert stat.S_IMODE((root / "n").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "n" / "e").stat().st_mode) == 0o700
    assert err(run(command="rename", old_path="/memories", new_path="/memories/x")) == (
        "Cannot rename the /memories directory itself"
    )
    assert err(run(command="rename", old_path="/memories/b.md", new_path="/memories")) == (
        "The destination /memories already exists"
    )


def test_rename_into_itself_maps_error(run, root):
    (root / "d").mkdir()
    msg = err(run(command="rename", old_path="/memories/d", new_path="/memories/d/sub/d"))
    assert str(root) not in msg


def test_rename_refuses_hostile_destination(run, root):
    (root / "a.md").write_text("x")
    assert err(run(command="rename", old_path="/memories/a.md", new_path="/memories/../a.md")) == (
        "Path /memories/../a.md would escape /memories directory"
    )
    assert (root / "a.md").exists()


# ------------------------------------------------------------------ dispatch, modes, disabled


def test_unknown_command_and_missing_params(run):
    assert err(run(command="frobnicate"))
    assert err(run())
    assert "path" in err(run(command="view"))
    assert "file_text" in err(run(command="create", path="/memories/a.md"))
    assert "insert_line" in err(run(command="insert", path="/memories/a.md", insert_text="x"))
    assert err(run(command="insert", path="/memories/a.md", insert_line="1", insert_text="x"))
    assert err(run(command="view", path=5))
    assert err(run_tool("not a dict", ToolContext(root=Path("/nonexistent"))))  # type: ignore[arg-type]


def test_plan_mode(root):
    ctx = ToolContext(root=root, mode="plan")
    (root / "f.md").write_text("x")
    for inp in (
        {"command": "create", "path": "/memories/n.md", "file_text": "x"},
        {"command": "str_replace", "path": "/memories/f.md", "old_str": "x", "new_str": "y"},
        {"command": "insert", "path": "/memories/f.md", "insert_line": 0, "insert_text": "y"},
        {"command": "delete", "path": "/memories/f.md"},
        {"command": "rename", "old_path": "/memories/f.md", "new_path": "/memories/g.md"},
    ):
        res = run_tool(inp, ctx)
        assert res.is_error
        assert res.content == f"Memory tool is in plan mode: {inp['command']} is not allowed (view only)"
    assert (root / "f.md").read_text() == "x" and not (root / "n.md").exists()
    assert not run_tool({"command": "view", "path": "/memories/f.md"}, ctx).is_error


def test_strict_mode(root):
    asked: list[str] = []
    ctx = ToolContext(root=root, mode="strict", confirm=lambda d: asked.append(d) or False)
    res = run_tool({"command": "create", "path": "/memories/n.md", "file_text": "x"}, ctx)
    assert res.is_error and res.content == "The user declined the create of /memories/n.md"
    assert asked and "/memories/n.md" in asked[0]
    assert not (root / "n.md").exists()
    ctx.confirm = lambda d: True
    assert not run_tool({"command": "create", "path": "/memories/n.md", "file_text": "x"}, ctx).is_error
    ctx.confirm = None
    res = run_tool({"command": "delete", "path": "/memories/n.md"}, ctx)
    assert res.content == "The user declined the delete of /memories/n.md"
    ctx.confirm = lambda d: False
    assert not run_tool({"command": "view", "path": "/memories/n.md"}, ctx).is_error


def test_disabled(root):
    ctx = ToolContext(root=root, enabled=False, disabled_by="/home/u/.kin/settings.toml")
    for inp in ({"command": "view", "path": "/memories"}, {"command": "delete", "path": "/memories/x"}, {}):
        res = run_tool(inp, ctx)
        assert res.is_error
        assert res.content == "Memory is disabled (memory_enabled = false in /home/u/.kin/settings.toml)"


# ------------------------------------------------------------------ audit


def _audit_lines(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / ".kin-index" / "audit.jsonl").read_text().splitlines()]


def test_audit_lines(run, root):
    ok(run(command="create", path="/memories/a.md", file_text="x"))
    ok(run(command="view", path="/memories/a.md"))
    ok(run(command="view", path="/memories"))  # a listing is not a body read
    err(run(command="delete", path="/memories/zz.md"))
    ok(run(command="rename", old_path="/memories/a.md", new_path="/memories/b.md"))
    lines = _audit_lines(root)
    assert [(rec["command"], rec["paths"], rec["outcome"]) for rec in lines] == [
        ("create", ["/memories/a.md"], "ok"),
        ("view", ["/memories/a.md"], "ok"),
        ("delete", ["/memories/zz.md"], "error"),
        ("rename", ["/memories/a.md", "/memories/b.md"], "ok"),
    ]
    assert all(set(rec) == {"time", "command", "paths", "outcome", "source"} for rec in lines)
    assert {rec["source"] for rec in lines} == {"tool"}  # who made the call (an agent's is "agent")
    assert stat.S_IMODE((root / ".kin-index").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / ".kin-index" / "audit.jsonl").stat().st_mode) == 0o600


def test_audit_failure_does_not_break(run, root):
    (root / ".kin-index").write_text("I am a file")
    assert ok(run(command="create", path="/memories/a.md", file_text="abc"))
    assert ok(run(command="view", path="/memories/a.md"))
    assert ok(run(command="str_replace", path="/memories/a.md", old_str="b", new_str="B"))
    assert ok(run(command="insert", path="/memories/a.md", insert_line=3, insert_text="z"))
    assert (root / "a.md").read_text().endswith("---\nz\naBc\n")
    assert (root / ".kin-index").read_text() == "I am a file"


# ------------------------------------------------------------------ errors never leak the host path


def test_os_errors_name_only_virtual_paths(run, root, monkeypatch):
    (root / "f.md").write_text("x")

    def boom(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(root / "f.md"))

    for module, name in (
        (writing, "write_at"),
        (create_module, "create_at"),
        (delete_module, "remove_at"),
        (rename_module, "rename_at"),
    ):
        monkeypatch.setattr(module, name, boom)
    results = [
        run(command="str_replace", path="/memories/f.md", old_str="x", new_str="y"),
        run(command="insert", path="/memories/f.md", insert_line=0, insert_text="y"),
        run(command="create", path="/memories/g.md", file_text="y"),
        run(command="delete", path="/memories/f.md"),
        run(command="rename", old_path="/memories/f.md", new_path="/memories/h.md"),
    ]
    monkeypatch.setattr(writing, "open_for_read", boom)
    results.append(run(command="view", path="/memories/f.md"))
    for res in results:
        assert res.is_error and str(root) not in res.content and "/memories/" in res.content, res.content
        assert "Permission denied" not in res.content
    assert (root / "f.md").read_text() == "x" and not (root / "g.md").exists()


def test_unexpected_exception_is_a_result(run, root, monkeypatch):
    monkeypatch.setattr(view_module, "listing", lambda t: 1 / 0)
    res = run(command="view", path="/memories")
    assert res.is_error and str(root) not in res.content


def test_create_makes_missing_root_0700(tmp_path):
    root = tmp_path / "new" / "store"
    res = run_tool({"command": "create", "path": "/memories/a.txt", "file_text": "x"}, ToolContext(root=root))
    assert not res.is_error
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


def test_symlink_loop_does_not_crash(run, root):
    (root / "loop").symlink_to(root / "loop")
    (root / "ok.md").write_text("x")
    listing = ok(run(command="view", path="/memories"))
    assert "ok.md" in listing and "loop" not in listing
    assert err(run(command="view", path="/memories/loop"))
    assert err(run(command="str_replace", path="/memories/loop", old_str="a", new_str="b"))
