from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kin_memory.tool import guard, messages
from kin_memory.tool.commands import ToolContext, run_tool
from kin_memory.tool.guard import GuardError, open_for_read, resolve


def refused(root: Path, path: str) -> str:
    with pytest.raises(GuardError) as info:
        resolve(root, path)
    return info.value.message


def test_accepts_normal_paths(tmp_path):
    t = resolve(tmp_path, "/memories/a/b.md")
    assert t.lexical == Path(os.path.realpath(tmp_path)) / "a" / "b.md"
    assert t.parts == ("a", "b.md")
    assert resolve(tmp_path, "/memories").is_root
    assert resolve(tmp_path, "/memories/").is_root
    assert resolve(tmp_path, "/memories//a").parts == ("a",)
    assert resolve(tmp_path, "/memories/100%25 done.md").parts == ("100%25 done.md",)


@pytest.mark.parametrize("path", ["memories/a.md", "/etc/passwd", "", "/Memories/a", "a/memories"])
def test_missing_prefix(tmp_path, path):
    assert refused(tmp_path, path) == f"Path must start with /memories, got: {path}"


@pytest.mark.parametrize("path", ["/memories-x", "/memories-x/a.md", "/memoriesx", "/memories.d/a"])
def test_sibling_prefix(tmp_path, path):
    (tmp_path.parent / (tmp_path.name + "-x")).mkdir(exist_ok=True)
    assert refused(tmp_path, path) == messages.missing_prefix(path)


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../etc/passwd",
        "/memories/a/../../x",
        "/memories/..",
        "/memories/.",
        "/memories/a/./b",
        "/memories/..\\x",
        "/memories/a\\b.md",
        "/memories/%2e%2e/x",
        "/memories/%2E%2E%2Fx",
        "/memories/a%2fb",
        "/memories/a%5cb",
        "/memories/a%00b",
        "/memories/a\x00b",
        "/memories/.kin-index/audit.jsonl",
        "/memories/.hidden.md",
        "/memories/a/.git/config",
    ],
)
def test_traversal_and_hostile_forms(tmp_path, path):
    assert refused(tmp_path, path) == f"Path {path} would escape /memories directory"


def test_symlink_escape_at_depth(tmp_path):
    root = tmp_path / "store"
    outside = tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "a" / "b" / "out").symlink_to(outside)
    (root / "esc.md").symlink_to(outside / "secret.md")
    for p in (
        "/memories/a/b/out",
        "/memories/a/b/out/secret.md",
        "/memories/a/b/out/new.md",
        "/memories/esc.md",
    ):
        assert refused(root, p) == "Path would escape /memories directory via symlink"
    ctx = ToolContext(root=root)
    res = run_tool({"command": "view", "path": "/memories/a/b/out/secret.md"}, ctx)
    assert res.is_error and res.content == messages.SYMLINK_ESCAPE
    res = run_tool({"command": "create", "path": "/memories/a/b/out/new.md", "file_text": "x"}, ctx)
    assert res.is_error and not (outside / "new.md").exists()
    listing = run_tool({"command": "view", "path": "/memories"}, ctx).content
    assert "out" not in listing and "esc.md" not in listing


def test_symlink_into_index_refused(tmp_path):
    (tmp_path / ".kin-index").mkdir()
    (tmp_path / "idx").symlink_to(tmp_path / ".kin-index")
    assert refused(tmp_path, "/memories/idx/audit.jsonl") == messages.SYMLINK_ESCAPE


def test_symlink_inside_to_inside_is_fine(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.md").write_text("hello")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "link.md").symlink_to(tmp_path / "real" / "f.md")
    t = resolve(tmp_path, "/memories/alias/f.md")
    assert t.resolved == Path(os.path.realpath(tmp_path)) / "real" / "f.md"
    ctx = ToolContext(root=tmp_path)
    res = run_tool({"command": "view", "path": "/memories/link.md"}, ctx)
    assert not res.is_error and res.content.endswith("     1\thello")
    res = run_tool(
        {"command": "str_replace", "path": "/memories/alias/f.md", "old_str": "hello", "new_str": "hi"}, ctx
    )
    assert not res.is_error
    assert (tmp_path / "real" / "f.md").read_text() == "hi"
    assert (tmp_path / "link.md").is_symlink()


def test_root_itself_symlinked(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    t = resolve(tmp_path / "link", "/memories/x.md")
    assert t.resolved == Path(os.path.realpath(real)) / "x.md"


def test_open_for_read_refuses_swapped_link(tmp_path, monkeypatch):
    root = tmp_path / "store"
    root.mkdir()
    (tmp_path / "secret").write_text("s")
    (root / "f.md").write_text("ok")
    t = resolve(root, "/memories/f.md")
    assert open_for_read(t)[0] == b"ok"
    (root / "f.md").unlink()
    (root / "f.md").symlink_to(tmp_path / "secret")  # swapped after the check
    with pytest.raises(OSError):
        open_for_read(t)  # O_NOFOLLOW: ELOOP
    res = run_tool({"command": "view", "path": "/memories/f.md"}, ToolContext(root=root))
    assert res.is_error and res.content == messages.SYMLINK_ESCAPE


def test_open_for_read_checks_fd_real_path(tmp_path, monkeypatch):
    root = tmp_path / "store"
    root.mkdir()
    (root / "f.md").write_text("ok")
    t = resolve(root, "/memories/f.md")
    monkeypatch.setattr(guard, "fd_real_path", lambda fd: str(tmp_path / "elsewhere"))
    with pytest.raises(GuardError) as info:
        open_for_read(t)
    assert info.value.message == messages.SYMLINK_ESCAPE


_segment = st.one_of(
    st.sampled_from(
        ["..", ".", "...", "..\\", "%2e%2e", "%2E.", "a", "b.md", "", "%2f", "\x00", "~", "link", "-x"]
    ),
    st.text(alphabet="ab.%2eE/\\\x00-", max_size=6),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefix=st.sampled_from(["/memories", "/memories/", "/memories-x/", "/", "", "/memories/a/"]),
    segments=st.lists(_segment, max_size=6),
)
def test_no_generated_path_escapes(tmp_path_factory, prefix, segments):
    base = tmp_path_factory.getbasetemp() / "prop"
    root = base / "store"
    if not root.exists():
        (root / "a").mkdir(parents=True)
        (base / "outside").mkdir()
        (root / "link").symlink_to(base / "outside")
        (root / ".kin-index").mkdir()
    path = prefix + "/".join(segments)
    try:
        t = resolve(root, path)
    except GuardError:
        return
    root_real = os.path.realpath(root)
    real = os.path.realpath(t.lexical)
    assert real == root_real or real.startswith(root_real + os.sep)
    rel = os.path.relpath(real, root_real)
    assert rel == "." or not any(c.startswith(".") for c in rel.split(os.sep))
    assert "\x00" not in path and "\\" not in path
