"""A corpus of hostile memory files, fed to `kin-memory check` and to the server.

Every file must end with a diagnostic (or, for things that are not files at all, a reason the check
prints or the server logs), within a time bound, with bounded memory and no traceback on stderr.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from reliability_support import COUNTS, check_json, env_for, peak_rss_kb, write

LAUGHS = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
BILLION_LAUGHS = '---\ncategory: preference\nl0: &l0 "lol"\n' + LAUGHS + "---\nbody\n"
MERGE_BOMB = (
    "---\ncategory: preference\nm0: &m0 {a: 1, b: 2}\n"
    + "".join(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: {i}}}\n" for i in range(1, 30))
    + "---\nx\n"
)


def corpus(root: Path, outside: Path) -> dict[str, set[str]]:
    """Write the hostile files; returns relative path → the codes `check` must report for it."""
    expect: dict[str, set[str]] = {}

    def add(rel: str, data: str | bytes, codes: set[str]) -> None:
        write(root / rel, data)
        expect[rel] = codes

    add("bomb/billion-laughs.md", BILLION_LAUGHS, {"KM105"})
    add("bomb/merge-keys.md", MERGE_BOMB, {"KM105"})
    add(
        "nest/flow-deep.md",
        "---\ncategory: preference\na: " + "[" * 50_000 + "]" * 50_000 + "\n---\nx\n",
        {"KM102"},
    )
    add("nest/map-deep.md", "---\n" + "{a: " * 5000 + "1" + "}" * 5000 + "\n---\nx\n", {"KM102"})
    add("nest/block-deep.md", "---\ncategory: preference\na:\n  " + "- " * 2000 + "x\n---\nx\n", {"KM102"})
    add(
        "keys/duplicate.md",
        "---\ncategory: episodic\nworkspace: global\ncategory: preference\n---\nx\n",
        {"KM104"},
    )
    add(
        "keys/ten-thousand.md",
        "---\ncategory: preference\n" + "".join(f"k{i}: 'v'\n" for i in range(10_000)) + "---\nx\n",
        {"KM105"},
    )
    add(
        "keys/huge-frontmatter.md",
        "---\ncategory: preference\nnote: '" + "q" * 300_000 + "'\n---\nx\n",
        {"KM102"},
    )
    add(
        "keys/python-tag.md",
        "---\ncategory: !!python/object/apply:os.system ['touch " + str(outside / "pwned") + "']\n---\nx\n",
        set(),
    )
    add("ws/tab-indent.md", "---\n\tcategory: preference\n---\nx\n", {"KM102"})
    add("ws/bom.md", "\ufeff---\ncategory: prefrence\n---\nx\n", {"KM201"})
    add("ws/lone-cr.md", "---\rcategory: prefrence\r---\rbody\r", {"KM201"})
    add("ws/mixed-endings.md", "---\r\ncategory: prefrence\rworkspace: global\n---\r\nbody\n", {"KM201"})
    add("ws/only-fence.md", "---\n", {"KM101"})
    add("ws/not-mapping.md", "---\n- a\n- b\n---\nx\n", {"KM103"})
    add("bytes/invalid-utf8-frontmatter.md", b"---\ncategory: pref\xc3\x28rence\n---\nx\n", {"KM603"})
    add("bytes/surrogate.md", b"---\ncategory: preference\n---\n\xed\xa0\x80 lone surrogate\n", {"KM603"})
    add("bytes/nul-frontmatter.md", b"---\ncategory: prefer\x00ence\n---\nx\n", {"KM603"})
    add("bytes/random.md", bytes((i * 7919 + 13) % 256 for i in range(4096)), {"KM603"})
    add(
        "size/long-frontmatter-line.md",
        "---\ncategory: preference\nnote: " + "w" * 100_000 + "\n---\nx\n",
        {"KM105"},
    )
    add(
        "size/long-body-line.md",
        "---\ncategory: preference\n---\n" + "token=" + "A1" * 50_000 + "\n",
        {"KM600"},
    )
    add("size/many-lines.md", "---\ncategory: preference\n---\n" + "\n" * 200_000, {"KM600"})
    add(
        "size/ten-mb.md",
        b"---\ncategory: preference\n---\n" + b"memory text\n" * (10 * 1024 * 1024 // 12),
        {"KM600"},
    )
    with open(root / "size" / "sparse-17mb.md", "wb") as f:
        f.truncate(17 * 1024 * 1024)
    expect["size/sparse-17mb.md"] = {"KM900"}
    add("empty/empty.md", b"", {"KM106"})
    add("empty/whitespace.md", " \n\t\n", {"KM106"})
    (root / "odd" / "folder.md").mkdir(parents=True)
    expect["odd/folder.md"] = {"KM900"}
    os.symlink(root / "odd" / "loop-b.md", root / "odd" / "loop-a.md")
    os.symlink(root / "odd" / "loop-a.md", root / "odd" / "loop-b.md")
    expect["odd/loop-a.md"] = expect["odd/loop-b.md"] = {"KM900"}
    os.symlink(root / "odd" / "nowhere.md", root / "odd" / "dangling.md")
    expect["odd/dangling.md"] = {"KM900"}
    os.mkfifo(root / "odd" / "fifo.md")
    expect["odd/fifo.md"] = {"KM900"}
    write(outside / "secret.md", "---\ncategory: preference\n---\noutside\n")
    os.symlink(outside / "secret.md", root / "odd" / "escape.md")
    expect["odd/escape.md"] = {"KM900"}
    unreadable = write(
        root / "odd" / "mode-000.md", memory_text := "---\ncategory: preference\n---\nlocked\n"
    )
    os.chmod(unreadable, 0)
    if _can_read(unreadable):
        # Running as root: mode 000 does not stop reads, so this file reads normally; the FIFO and the
        # dangling symlink above stand in for "cannot be read".
        expect["odd/mode-000.md"] = set()
        assert memory_text
    else:
        expect["odd/mode-000.md"] = {"KM900"}
    COUNTS["inputs tried (hostile corpus)"] += len(expect)
    return expect


def _can_read(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False


def _check_with_rusage(root: Path, home: Path) -> tuple[str, str, int, float, int]:
    """Run `kin-memory check --format json`; returns stdout, stderr, status, seconds, peak RSS (KB)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kin_memory",
            "check",
            str(root),
            "--root",
            str(root),
            "--workspace",
            "none",
            "--format",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(root, home),
        cwd=str(home),
    )
    out: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda k=k, s=s: out.__setitem__(k, s.read()))
        for k, s in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for t in readers:
        t.start()
    timer = threading.Timer(60, proc.kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return (
        out["out"].decode(),
        out["err"].decode(),
        proc.returncode,
        time.monotonic() - started,
        usage.ru_maxrss,
    )


def test_check_cli_survives_the_corpus(root: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    expect = corpus(root, outside)
    stdout, stderr, status, seconds, peak_kb = _check_with_rusage(root, home)
    assert "Traceback" not in stderr, stderr
    assert status == 1, (status, stderr)  # KM603/KM102 are errors
    assert seconds < 30, seconds
    assert peak_kb < 400 * 1024, f"check used {peak_kb} KB"
    import json

    rows = json.loads(stdout)
    got: dict[str, set[str]] = {}
    for row in rows:
        rel = os.path.relpath(row["path"], root)
        got.setdefault(rel, set()).add(row["code"])
        start, end = row["range"]["start"], row["range"]["end"]
        assert (start["line"], start["character"]) <= (end["line"], end["character"]), row
    for rel, codes in expect.items():
        assert codes <= got.get(rel, set()), (rel, got.get(rel))
    assert not (outside / "pwned").exists(), "a YAML tag executed code"
    # the python tag is read as text: its category is not a string value the store knows
    assert {"KM201", "KM203"} & got.get("keys/python-tag.md", set())


def test_server_survives_the_corpus(root: Path, home: Path, tmp_path: Path, server_factory) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    expect = corpus(root, outside)
    cli = {}
    for row in check_json(root, home):
        cli.setdefault(os.path.relpath(row["path"], root), set()).add(row["code"])
    started = time.monotonic()
    server = server_factory()
    server.initialize(
        caps={"general": {"positionEncodings": ["utf-32"]}, "workspace": {"configuration": True}}
    )
    assert time.monotonic() - started < 30
    for rel, codes in expect.items():
        if not codes:
            continue
        # a file gets a diagnostic; what is no file to publish for (a folder, a symlink it refuses)
        # gets a logged reason, once the server's own load after the cold-start shards is done
        server.wait_until(
            lambda rel=rel: (
                bool(server.codes(root / rel)) or any(f"/memories/{rel}:" in m for m in server.logs())
            ),
            20,
            f"a diagnostic or reason for {rel}",
        )
        published = server.codes(root / rel)
        if published:
            assert codes <= published, (rel, published)
    assert not (outside / "pwned").exists()
    # open a few of the worst as editor buffers, hover into them, and keep serving
    for rel in ("bomb/billion-laughs.md", "size/long-body-line.md", "nest/flow-deep.md", "ws/lone-cr.md"):
        uri = server.open(root / rel)
        for line, col in ((0, 0), (1, 3), (3, 99_999), (10_000, 0)):
            response = server.hover(uri, line, col)
            assert "error" not in response, (rel, response)
    assert server.hover(server.open(root / "ws/bom.md"), 1, 2)["result"] is not None
    assert peak_rss_kb(server.pid) < 400 * 1024
    assert server.shutdown() == 0
    server.assert_clean_stderr()
    assert {k for k, v in cli.items() if v} >= {k for k, v in expect.items() if v}


@pytest.mark.parametrize("levels", [9])
def test_yaml_bomb_is_not_expanded_in_process(levels: int) -> None:
    """The composed bomb costs microseconds and no memory: aliases stay references."""
    from kin_memory.store.frontmatter import parse_frontmatter

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    for _ in range(100):
        fm = parse_frontmatter(BILLION_LAUGHS)
        assert fm.status == "ok" and fm.get("category").value == "preference"
        assert fm.get(f"l{levels}").is_scalar is False
    assert time.perf_counter() - started < 30  # a hang guard: an expanded bomb would not end (memory below)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024
    COUNTS["inputs tried (hostile corpus)"] += 1


def test_files_vanishing_and_changing_mid_read(root: Path, home: Path, server_factory) -> None:
    """A churner rewrites, truncates, deletes, renames and swaps files for folders while `check` and the
    server read them: no traceback, every check finishes, and once the churn stops the server agrees
    with a from-scratch check."""
    import random
    import shutil

    from reliability_support import assert_matches_check, memory

    for i in range(60):
        write(
            root / f"c{i % 6}" / f"m{i}.md",
            memory("prefrence" if i % 3 else "preference", f"memory {i}\n" * 200, None),
        )
    server = server_factory()
    server.initialize()
    stop = threading.Event()
    actions = [0]

    def churn() -> None:
        rng = random.Random(11)
        while not stop.is_set():
            path = root / f"c{rng.randrange(6)}" / f"m{rng.randrange(60)}.md"
            kind = rng.randrange(5)
            try:
                if kind == 0:
                    path.unlink(missing_ok=True)
                elif kind == 1:
                    with open(path, "w", encoding="utf-8") as f:  # in place: a reader may see half of it
                        f.write(memory("episodc", "rewritten " * rng.randrange(1, 5000), None))
                elif kind == 2:
                    path.rename(path.with_name(f"r{rng.randrange(1000)}.md")) if path.exists() else None
                elif kind == 3:
                    if path.exists() and not path.is_dir():
                        path.unlink()
                    path.mkdir(exist_ok=True)  # a file swapped for a folder named x.md
                    shutil.rmtree(path) if rng.random() < 0.5 else None
                else:
                    os.truncate(path, rng.randrange(0, 50)) if path.is_file() else None
            except OSError:
                pass
            actions[0] += 1
            time.sleep(0.002)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(4):
            stdout, stderr, status, seconds, _ = _check_with_rusage(root, home)
            assert "Traceback" not in stderr and status in (0, 1) and seconds < 30, (status, stderr)
            assert isinstance(json.loads(stdout), list)
            assert "result" in server.request(
                "workspace/executeCommand", {"command": "kin.memory.list", "arguments": [{}]}
            )
    finally:
        stop.set()
        thread.join(10)
    COUNTS["inputs tried (files changed or removed mid-read)"] += actions[0]
    # Known gap, bounded: under this churn the file watcher can miss the file that replaces a folder of
    # the same name (c4/m12.md here), so the server may stay out of step for such a file until its next
    # change. Only those few files may be: a watcher that lost its place would leave most of the 60 out.
    try:
        assert_matches_check(server, root, home, timeout=5)
        out_of_step = 0
    except AssertionError as exc:
        out_of_step = str(exc).count("file://")
    COUNTS["files out of step after churn (server vs check)"] += out_of_step
    assert out_of_step <= 3, out_of_step
    # ...and a file re-saved afterwards is always picked up:
    for path in sorted(root.rglob("*.md")):
        if path.is_file():
            os.utime(path)
    assert_matches_check(server, root, home, timeout=15)
    assert server.shutdown() == 0
    server.assert_clean_stderr()
