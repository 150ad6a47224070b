"""A memory rewritten at the same size with its old mtime put back (what `tar -x`, `rsync -t`, `cp -p` and
sync clients do) is a changed file for every cache: the findings cache of `kin-memory check`, the recall
index of `kin-memory search`, and the language server's warm start (its segment snapshots). A secret
written that way gets its KM602."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HARMLESS = (
    "---\ncategory: project-fact\n---\n# Keys\n\nThe deploy key is kept in the vault: AKIAxxxxxxxxxxxxxxxx.\n"
)
SECRET = (
    "---\ncategory: project-fact\n---\n# Keys\n\nThe deploy key is kept in the vault: AKIAIOSFODNN7EXAMPLE.\n"
)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    path = root / "facts" / "keys.md"
    path.write_text(HARMLESS)
    (root / "facts" / "db.md").write_text("---\ncategory: project-fact\n---\n# DB\n\nPostgres on 5432.\n")
    assert len(HARMLESS) == len(SECRET)
    return root, home, path


def run(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    env.pop("XDG_CACHE_HOME", None)
    out = subprocess.run([sys.executable, "-m", "kin_memory", *args], capture_output=True, text=True,
                         timeout=120, env=env, cwd=str(home))  # fmt: skip
    assert "Traceback" not in out.stderr, out.stderr
    return out


def codes(root: Path, home: Path) -> list[str]:
    out = run(root, home, "check", "--format", "json")
    return sorted(r["code"] for r in json.loads(out.stdout) if r["path"].endswith("keys.md"))


def rewrite_keeping_mtime(path: Path, text: str) -> None:
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_mtime_ns, path.stat().st_size) == (st.st_mtime_ns, st.st_size)


def test_check_finds_the_secret_of_a_same_size_rewrite(world) -> None:
    root, home, path = world
    assert "KM602" not in codes(root, home)
    assert "KM602" not in codes(root, home)  # the second answered from the cache
    rewrite_keeping_mtime(path, SECRET)
    assert "KM602" in codes(root, home)


def test_search_finds_the_words_of_a_same_size_rewrite(world) -> None:
    root, home, path = world
    rewrite_keeping_mtime(path, HARMLESS.replace("vault", "attic"))
    assert "keys.md" in run(root, home, "search", "attic").stdout
    rewrite_keeping_mtime(path, HARMLESS.replace("vault", "cabin"))
    out = run(root, home, "search", "cabin")
    assert "keys.md" in out.stdout, out.stdout + out.stderr
    assert "keys.md" not in run(root, home, "search", "attic").stdout


def server_codes(env: dict[str, str], path: Path) -> list[str]:
    """The codes the language server's start publishes for `path` (a start of its own)."""
    from support.rawlsp import RawClient

    client = RawClient.started(env)
    try:
        published = client.diagnostics().get(path.as_uri(), [])
        return sorted(d["code"] for d in published)
    finally:
        client.close()


def test_the_language_servers_warm_start_finds_the_secret(world) -> None:
    root, home, path = world
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    assert "KM602" not in server_codes(env, path)
    assert "KM602" not in server_codes(env, path)  # the warm start: answered from the snapshots
    rewrite_keeping_mtime(path, SECRET)
    assert "KM602" in server_codes(env, path)
