"""Issue 14, point 4: a repository's `.kin/settings.toml` planted as a link to /dev/zero, a FIFO,
/dev/stdin or a huge file gives a KM701 problem at once; it never hangs or exhausts memory.

Each load runs in a child process with a memory limit and a timeout, so the code before the fix (which
read the file whole, or waited on the FIFO forever) fails the test instead of taking the run down.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kin_memory.store.settings import effective_settings, load_settings_file

LOAD = """
import json, sys
from pathlib import Path
from kin_memory.store.settings import load_settings_file
f = load_settings_file(Path(sys.argv[1]), project=sys.argv[2] == "project")
print(json.dumps({"values": f.values, "problems": [[p.code, p.message] for p in f.problems]}))
"""
MEMORY_LIMIT = 1024 * 1024 * 1024
SETTINGS_CAP = 256 * 1024  # store.settings.MAX_SETTINGS_BYTES


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def load_in_child(path: Path, kind: str = "project") -> tuple[dict, float]:
    start = time.monotonic()
    try:
        out = subprocess.run(
            [sys.executable, "-c", LOAD, str(path), kind],
            stdin=subprocess.PIPE,  # kept open and silent: /dev/stdin would block on it forever
            capture_output=True,
            text=True,
            timeout=10,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path} did not finish: it blocked")
    elapsed = time.monotonic() - start
    assert out.returncode == 0 and "MemoryError" not in out.stderr, out.stderr[-2000:]
    return json.loads(out.stdout), elapsed


@pytest.fixture
def kin(tmp_path: Path) -> Path:
    folder = tmp_path / "repo" / ".kin"
    folder.mkdir(parents=True)
    return folder


def _only_km701(result: dict) -> str:
    assert result["values"] == {}
    assert [code for code, _ in result["problems"]] == ["KM701"], result
    return result["problems"][0][1]


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/stdin"])
def test_project_settings_linked_to_a_device_is_km701_at_once(kin: Path, target: str) -> None:
    (kin / "settings.toml").symlink_to(target)
    result, elapsed = load_in_child(kin / "settings.toml")
    message = _only_km701(result)
    assert "not read" in message and "outside" in message
    assert elapsed < 5


def test_project_settings_fifo_is_km701_not_a_regular_file(kin: Path) -> None:
    os.mkfifo(kin / "settings.toml")
    result, elapsed = load_in_child(kin / "settings.toml")
    assert _only_km701(result) == "settings file is not a regular file (a FIFO): not read"
    assert elapsed < 5


def test_project_settings_linked_to_a_fifo_in_its_folder_is_km701(kin: Path) -> None:
    os.mkfifo(kin / "pipe")
    (kin / "settings.toml").symlink_to("pipe")
    result, elapsed = load_in_child(kin / "settings.toml")
    assert "not a regular file (a FIFO)" in _only_km701(result) and elapsed < 5


def test_project_settings_huge_file_is_km701_naming_the_cap(kin: Path) -> None:
    with open(kin / "settings.toml", "wb") as f:
        f.truncate(300 * 1024 * 1024)  # sparse
    result, elapsed = load_in_child(kin / "settings.toml")
    assert _only_km701(result) == "settings file is over 256 KB (300 MB): not read"
    assert elapsed < 5


def test_global_settings_linked_to_dev_zero_is_km701_not_a_regular_file(tmp_path: Path) -> None:
    # the global file is the user's own: it may be a link anywhere, but it must still be a plain file
    link = tmp_path / "settings.toml"
    link.symlink_to("/dev/zero")
    result, elapsed = load_in_child(link, "global")
    assert _only_km701(result) == "settings file is not a regular file (a device): not read"
    assert elapsed < 5


def test_project_settings_link_inside_its_kin_folder_is_followed(kin: Path) -> None:
    (kin / "shared.toml").write_text("memory_enabled = false\n")
    (kin / "settings.toml").symlink_to("shared.toml")
    loaded = load_settings_file(kin / "settings.toml", project=True)
    assert loaded.values == {"memory_enabled": False} and loaded.problems == ()
    assert loaded.text == "memory_enabled = false\n"  # consumers take line text from here


def test_project_settings_link_out_of_the_repository_is_refused(kin: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text("memory_enabled = false\n")
    (kin / "settings.toml").symlink_to(elsewhere)
    loaded = load_settings_file(kin / "settings.toml", project=True)
    assert loaded.values == {}
    assert [p.message for p in loaded.problems] == [
        "settings file is a link pointing outside its `.kin` folder: not read"
    ]


def test_project_kin_folder_linked_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "settings.toml").write_text("memory_enabled = false\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".kin").symlink_to(elsewhere)
    settings = effective_settings([str(repo)], home=tmp_path / "home", env={})
    assert settings.memory_enabled is True
    assert [p.message for p in settings.problems] == [
        "the `.kin` folder is a link pointing outside the repository: not read"
    ]


def test_settings_at_the_cap_are_still_read(kin: Path) -> None:
    text = "memory_reflect = false\n"
    (kin / "settings.toml").write_text(text + "#" * (SETTINGS_CAP - len(text) - 1) + "\n")
    assert load_settings_file(kin / "settings.toml", project=True).values == {"memory_reflect": False}
