"""No tool operation reads, writes, renames or deletes anything outside the root.

Property-based: thousands of generated hostile paths through all six commands on a store with symlinks
planted inside that point outside (at several depths, dangling, relative, into the hidden folder). The
proof is on the filesystem: the tree next to the store is snapshotted (content, mode, mtime, links)
before and after every call, and its secret marker never appears in a result.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kin_memory.tool import messages
from kin_memory.tool.commands import ToolContext, run_tool, writing

SECRET = "OUTSIDE-SECRET-7f3a"


def snapshot(base: Path, skip: Path) -> dict[str, tuple]:
    """Everything under `base` except the store itself: type, mode, mtime, size, content hash, link target."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        if Path(dirpath) == skip.parent:
            dirnames[:] = [d for d in dirnames if d != skip.name]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, base)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", st.st_mode, st.st_mtime_ns)
            else:
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                out[rel] = ("file", st.st_mode, st.st_mtime_ns, st.st_size, digest)
    return out


def build(base: Path) -> Path:
    """A fresh store with hostile links, next to an `outside` tree and a `/memories-x`-like sibling."""
    root = base / "store"
    if root.exists():
        shutil.rmtree(root)
    outside = base / "outside"
    if not outside.exists():
        (outside / "sub").mkdir(parents=True)
        (outside / "secret.md").write_text(f"{SECRET}\nline two\n")
        (outside / "sub" / "deep.md").write_text(SECRET)
        (base / "store-x").mkdir()
        (base / "store-x" / "sib.md").write_text(SECRET)
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.md").write_text("inside\n")
    (root / "note.md").write_text("hello x\n")
    (root / ".kin-index").mkdir()
    (root / "out").symlink_to(outside)  # directory link at depth 1
    (root / "a" / "b" / "esc").symlink_to(outside / "sub")  # at depth 3
    (root / "outfile.md").symlink_to(outside / "secret.md")  # file link
    (root / "dangling.md").symlink_to(
        outside / "created-through-link.md"
    )  # create through it = write outside
    (root / "up").symlink_to("..")  # relative, to the parent of the store
    (root / "sibling").symlink_to(base / "store-x")
    (root / "idx").symlink_to(root / ".kin-index")
    return root


_SEGMENTS = [
    "..",
    ".",
    "...",
    "..\\",
    "\\",
    "%2e%2e",
    "%2E%2e%2F",
    "%2f",
    "%5c",
    "%00",
    "\x00",
    "~",
    "-x",
    "out",
    "up",
    "sibling",
    "idx",
    "outfile.md",
    "dangling.md",
    "esc",
    "secret.md",
    "sub",
    "deep.md",
    "a",
    "b",
    "f.md",
    "note.md",
    "new.md",
    "",
    "memories",
    ".kin-index",
    "store-x",
]
segment = st.one_of(st.sampled_from(_SEGMENTS), st.text(alphabet="ab.%2eE/\\\x00-~", max_size=5))
prefix = st.sampled_from(
    [
        "/memories/",
        "/memories",
        "/memories-x/",
        "/memories/../",
        "/memories/a/b/",
        "/",
        "",
        "memories/",
        "/etc/",
        "%2fmemories/",
        "/memories//",
        "/memories/./",
    ]
)
hostile = st.builds(lambda p, s: p + "/".join(s), prefix, st.lists(segment, min_size=0, max_size=5))
valid_inside = st.sampled_from(["/memories/note.md", "/memories/a/b/f.md", "/memories/a", "/memories/zz.md"])


def inputs() -> st.SearchStrategy[dict]:
    text = st.sampled_from(["x", SECRET, "---\ncategory: episodic\n---\nbody\n"])
    return st.one_of(
        st.builds(lambda p: {"command": "view", "path": p}, hostile),
        st.builds(lambda p, r: {"command": "view", "path": p, "view_range": r}, hostile, st.just([1, -1])),
        st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, hostile, text),
        st.builds(
            lambda p: {"command": "str_replace", "path": p, "old_str": "line", "new_str": "LINE"}, hostile
        ),
        st.builds(
            lambda p: {"command": "str_replace", "path": p, "old_str": SECRET[:7], "new_str": "y"}, hostile
        ),
        st.builds(lambda p: {"command": "insert", "path": p, "insert_line": 0, "insert_text": "z"}, hostile),
        st.builds(lambda p: {"command": "delete", "path": p}, hostile),
        st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, hostile, hostile),
        st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, valid_inside, hostile),
        st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, hostile, valid_inside),
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("containment")


def _check_one(base: Path, inp: dict) -> None:
    root = build(base)
    before = snapshot(base, root)
    res = run_tool(inp, ToolContext(root=root))
    assert snapshot(base, root) == before, (inp, res.content)
    assert SECRET not in res.content or SECRET in str(inp), (inp, res.content)
    assert str(base) not in res.content, (inp, res.content)
    assert root.is_dir() and (root / ".kin-index").is_dir() or inp["command"] != "delete"


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(inp=inputs())
def test_generated_calls_never_touch_outside(base, inp):
    _check_one(base, inp)


@pytest.mark.parametrize(
    "inp",
    [
        {"command": "create", "path": "/memories/dangling.md", "file_text": "x"},
        {"command": "create", "path": "/memories/out/new.md", "file_text": "x"},
        {"command": "create", "path": "/memories/up/store-x/new.md", "file_text": "x"},
        {"command": "view", "path": "/memories/outfile.md"},
        {"command": "view", "path": "/memories/a/b/esc/deep.md"},
        {"command": "view", "path": "/memories/out"},
        {"command": "str_replace", "path": "/memories/outfile.md", "old_str": "line", "new_str": "L"},
        {"command": "insert", "path": "/memories/sibling/sib.md", "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": "/memories/out/secret.md"},
        {
            "command": "delete",
            "path": "/memories/up",
        },  # a link to the parent: removing the link itself is fine
        {"command": "rename", "old_path": "/memories/out/secret.md", "new_path": "/memories/stolen.md"},
        {"command": "rename", "old_path": "/memories/note.md", "new_path": "/memories/out/planted.md"},
        {"command": "rename", "old_path": "/memories/note.md", "new_path": "/memories/idx/x.md"},
        {"command": "view", "path": "/memories/idx/tool.lock"},
    ],
)
def test_known_escapes(base, inp):
    _check_one(base, inp)


def test_listing_hides_escaping_links(base):
    root = build(base)
    out = run_tool({"command": "view", "path": "/memories"}, ToolContext(root=root)).content
    for name in ("out", "outfile.md", "esc", "up", "sibling", "idx", "dangling.md"):
        assert f"/{name}" not in out
    assert "/memories/note.md" in out and "/memories/a/b/" in out


# ---------------------------------------------------------------- a symlink planted between check and use


def _swap_dir_for_link(directory: Path, target: Path) -> None:
    shutil.rmtree(directory)
    directory.symlink_to(target)


@pytest.mark.parametrize(
    "inp",
    [
        {"command": "create", "path": "/memories/a/b/new.md", "file_text": SECRET},
        {"command": "delete", "path": "/memories/a/b/f.md"},
        {"command": "rename", "old_path": "/memories/a/b/f.md", "new_path": "/memories/moved.md"},
    ],
)
def test_link_planted_after_check_create_delete_rename(base, monkeypatch, inp):
    root = build(base)
    (base / "outside" / "sub" / "f.md").write_text("outside twin")
    before = snapshot(base, root)
    monkeypatch.setattr(
        writing, "before_write", lambda path: _swap_dir_for_link(root / "a", base / "outside")
    )
    res = run_tool(inp, ToolContext(root=root))
    # a/b now resolves to outside/sub: the walk meets the link at `a` and refuses it
    assert res.is_error and res.content == messages.SYMLINK_ESCAPE
    assert snapshot(base, root) == before
    (base / "outside" / "sub" / "f.md").unlink()


@pytest.mark.parametrize("command", ["str_replace", "insert"])
def test_link_planted_between_read_and_write(base, monkeypatch, command):
    root = build(base)
    (base / "outside" / "sub" / "f.md").write_text("inside\n")  # same text: only the containment stops it
    before = snapshot(base, root)
    monkeypatch.setattr(
        writing, "before_commit", lambda path: _swap_dir_for_link(root / "a", base / "outside")
    )
    inp = {
        "command": command,
        "path": "/memories/a/b/f.md",
        "old_str": "inside",
        "new_str": "pwned",
        "insert_line": 0,
        "insert_text": "pwned",
    }
    res = run_tool(inp, ToolContext(root=root))
    assert res.is_error and res.content == messages.SYMLINK_ESCAPE
    assert snapshot(base, root) == before
    (base / "outside" / "sub" / "f.md").unlink()


def test_file_swapped_for_link_between_read_and_write(base, monkeypatch):
    root = build(base)
    before = snapshot(base, root)

    def swap(path: Path) -> None:
        path.unlink()
        path.symlink_to(base / "outside" / "secret.md")

    monkeypatch.setattr(writing, "before_commit", swap)
    res = run_tool(
        {"command": "str_replace", "path": "/memories/note.md", "old_str": "hello", "new_str": "bye"},
        ToolContext(root=root),
    )
    assert res.is_error and SECRET not in res.content
    assert snapshot(base, root) == before
