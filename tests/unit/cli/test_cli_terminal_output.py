"""Point 6: no CLI text output lets a terminal escape through, and no name fakes a line.

One store, planted the way a hostile agent could: file names, a title, a body and a category value
holding an OSC 52 clipboard write, CSI line erasure, a carriage return and a newline; the store itself
lives in a folder whose name holds one too (so every printed path carries it). Every text command runs
as a real process; its stdout and stderr together hold no ESC and no C0 or C1 control but the line feeds
and tabs of its own layout, and every planted memory is still one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

OSC52 = "\x1b]52;c;cHduZWQ=\x07"
ERASE = "\x1b[2K\r"
CSI8 = "\x9b2K"  # the one-byte (C1) form of CSI
HOSTILE = OSC52 + ERASE + CSI8
OSC_NAME = f"notes/osc{HOSTILE}.md"
NL_NAME = "notes/nl\nfake-line.md"
EXPIRED_DAYS = 60  # past the 42-day episodic lifetime: in the sweep's list


def _write(root: Path, rel: str, text: str, age_days: float = 0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    if age_days:
        t = time.time() - age_days * 86400
        os.utime(path, (t, t))
    return path


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / f"store{OSC52}" / "memory"
    episodic = "---\ncategory: episodic\nworkspace: global\n---\n"
    _write(root, OSC_NAME, f"{episodic}# Osc zebracorn {HOSTILE}\n\nzebracorn {HOSTILE} body\n", EXPIRED_DAYS)
    _write(root, NL_NAME, f"{episodic}# Nl zebracorn\n\nzebracorn {ERASE}body\n", EXPIRED_DAYS)
    # YAML's own escapes: the parsed value holds ESC and CR (raw ones would not parse)
    _write(root, "notes/cat.md", '---\ncategory: "epi\\e[2K\\rsodic"\nworkspace: global\n---\n# Cat\n\nx\n')
    _write(root, "notes/body.md", f"---\ncategory: preference\n---\n# Body\n\nline {HOSTILE}\nnext\n")
    return root, home


def _run(root: Path, home: Path, *args: str, stdin: str | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args, "--root", str(root), "--workspace", "none"],
        input=stdin,
        capture_output=True,
        text=True,
        errors="surrogateescape",
        timeout=120,
        env={**os.environ, "HOME": str(home), **(env or {})},
        cwd=str(home),
    )


def assert_inert(out: subprocess.CompletedProcess) -> str:
    text = out.stdout + out.stderr
    assert "Traceback" not in text, text
    bad = sorted(
        {repr(ch) for ch in text if (ord(ch) < 0x20 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F}
    )
    assert not bad, (bad, text)
    assert "\u202e" not in text
    return text


def assert_one_line_each(text: str, *, markers: tuple[str, ...] = ("osc", "nl\\n")) -> None:
    lines = text.split("\n")
    for marker in markers:
        assert len([ln for ln in lines if marker in ln]) == 1, (marker, text)
    assert not any(ln.startswith("fake-line") for ln in lines), text


def test_check_prints_paths_and_messages_inert(planted) -> None:
    root, home = planted
    text = assert_inert(_run(root, home, "check"))
    assert "KM201" in text and "epi\\x1b[2K\\rsodic" in text  # the finding quotes the value, escaped
    assert "osc\\x1b]52" in text  # the expired memory's path, escaped
    assert not any(ln.startswith("fake-line") for ln in text.split("\n")), text


def test_search_prints_path_title_and_snippet_inert(planted) -> None:
    root, home = planted
    out = _run(root, home, "search", "zebracorn")
    text = assert_inert(out)
    assert out.returncode == 0, text
    assert_one_line_each(_heads(out.stdout))
    as_json = _run(root, home, "search", "zebracorn", "--json")
    assert_inert(as_json)
    assert any(OSC52 in r["title"] for r in json.loads(as_json.stdout)["results"])  # the same data


def _heads(stdout: str) -> str:
    """The result lines of `search` (snippets are indented below their result)."""
    return "\n".join(ln for ln in stdout.split("\n") if not ln.startswith("    "))


def test_sweep_dry_run_lists_each_memory_on_one_line(planted) -> None:
    root, home = planted
    out = _run(root, home, "sweep", "--dry-run")
    text = assert_inert(out)
    assert "2 expired memories" in text, text
    assert_one_line_each(out.stdout)


def test_index_preview_prints_the_block_inert(planted) -> None:
    root, home = planted
    out = _run(root, home, "index-preview")
    assert_inert(out)
    assert_one_line_each(out.stdout)
    as_json = _run(root, home, "index-preview", "--json")
    assert_inert(as_json)
    assert json.loads(as_json.stdout)["lines"] == 5


def test_info_prints_the_store_path_inert(planted) -> None:
    root, home = planted
    text = assert_inert(_run(root, home, "info"))
    assert "store\\x1b]52" in text
    assert_inert(_run(root, home, "info", "--json"))


def _run_on_a_terminal(root: Path, home: Path, *args: str) -> str:
    """stdout and stderr on a pseudo-terminal, as a person running the command sees them."""
    import pty

    main, side = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "kin_memory", *args, "--root", str(root), "--workspace", "none"],
            stdin=subprocess.DEVNULL,
            stdout=side,
            stderr=side,
            timeout=120,
            env={**os.environ, "HOME": str(home)},
            cwd=str(home),
        )
        os.close(side)
        side = -1
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if side != -1:
            os.close(side)
        os.close(main)
    assert proc.returncode == 0
    # the terminal's own line discipline turns each line feed into CR LF: that is layout, not content
    return b"".join(chunks).decode("utf-8", "surrogateescape").replace("\r\n", "\n")


def test_tool_prints_listing_and_content_inert_on_a_terminal(planted) -> None:
    root, home = planted
    listing = _run_on_a_terminal(root, home, "tool", json.dumps({"command": "view", "path": "/memories"}))
    fake = subprocess.CompletedProcess([], 0, listing, "")
    assert_one_line_each(assert_inert(fake))
    content = _run_on_a_terminal(
        root, home, "tool", json.dumps({"command": "view", "path": "/memories/notes/body.md"})
    )
    text = assert_inert(subprocess.CompletedProcess([], 0, content, ""))
    assert "line \\x1b]52;c;cHduZWQ=\\x07\\x1b[2K\\r" in text and "     7\tnext" in text, text


def test_tool_prints_the_exact_result_into_a_pipe(planted) -> None:
    root, home = planted
    from kin_memory.tool.commands import ToolContext, run_tool

    call = {"command": "view", "path": "/memories/notes/body.md"}
    expected = run_tool(call, ToolContext(root=root, workspace=None)).content  # what the agent gets
    out = subprocess.run(  # bytes: a text-mode reader would turn the memory's own \r into \n
        [
            sys.executable,
            "-m",
            "kin_memory",
            "tool",
            json.dumps(call),
            "--root",
            str(root),
            "--workspace",
            "none",
        ],
        capture_output=True,
        timeout=120,
        env={**os.environ, "HOME": str(home)},
        cwd=str(home),
    )
    assert out.returncode == 0 and out.stderr == b""
    assert out.stdout == expected.encode("utf-8", "surrogateescape") + b"\n"
    assert (
        OSC52.encode() in out.stdout
    )  # exactly what the agent gets: the pipe's reader decides how to show it


def test_reflect_prints_summary_and_diff_inert(planted, tmp_path: Path) -> None:
    from reflect.fake_models import FakeModel, openai_stop, openai_tool_calls

    root, home = planted
    transcript = tmp_path / "t.md"
    transcript.write_text("user: remember the zebracorn\n")
    create = {
        "command": "create",
        "path": "/memories/prefs/zebra.md",
        "file_text": f"---\ncategory: preference\n---\n# Zebra {HOSTILE}\n\nbody {HOSTILE}\n",
    }
    with FakeModel([openai_tool_calls(create), openai_stop(f"done {HOSTILE}\nfake summary line")]) as fake:
        out = _run(
            root,
            home,
            "reflect",
            str(transcript),
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            fake.url + "/v1",
            "--api-key-env",
            "KIN_TEST_TERMINAL_KEY",
            "--dry-run",
            env={"KIN_TEST_TERMINAL_KEY": "sk-test-not-a-real-key"},
        )
    text = assert_inert(out)
    assert out.returncode == 0, text
    assert "+# Zebra \\x1b]52" in out.stdout, out.stdout
