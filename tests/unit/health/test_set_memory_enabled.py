"""The memory switch writes `memory_enabled` into the global settings file and keeps every other byte:
comments, order, other keys, tables, line endings. It creates the file when absent, writes through a
linked file, refuses a file it cannot safely change, and never writes a project settings file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kin_memory.store.settings import effective_settings
from kin_memory.store.settings_edit import SettingsEditError, edited, set_memory_enabled

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def settings(home: Path) -> Path:
    return home / ".kin" / "settings.toml"


def test_the_value_is_replaced_and_everything_else_kept(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    before = (
        "# my kin settings\n"
        'memory_dir = "~/notes/memory"   # where the store lives\n'
        "  memory_enabled=true  # the switch\n"
        "memory_reflect = false\n"
        "\n"
        "[reflection]\n"
        'model = "x"\n'
    )
    path.write_text(before)
    assert set_memory_enabled(False, tmp_path) == path
    assert path.read_text() == before.replace("memory_enabled=true", "memory_enabled=false")
    assert not effective_settings(home=tmp_path).memory_enabled
    set_memory_enabled(True, tmp_path)
    assert path.read_text() == before


def test_a_missing_key_is_added_before_the_first_table(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_text("# comment\nmemory_reflect = true\n\n[reflection]\nmemory_enabled = true\n")
    set_memory_enabled(False, tmp_path)
    assert path.read_text() == (
        "# comment\nmemory_reflect = true\n\nmemory_enabled = false\n[reflection]\nmemory_enabled = true\n"
    )  # the table's own key is not the switch
    assert tomllib.loads(path.read_text())["reflection"]["memory_enabled"] is True


def test_a_missing_key_is_appended_keeping_crlf_and_a_missing_final_newline(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_bytes(b"# windows\r\nmemory_reflect = true")
    set_memory_enabled(False, tmp_path)
    assert path.read_bytes() == b"# windows\r\nmemory_reflect = true\r\nmemory_enabled = false\r\n"


def test_the_file_and_its_folder_are_created_when_absent(tmp_path: Path) -> None:
    path = set_memory_enabled(False, tmp_path)
    assert path == settings(tmp_path) and path.read_text() == "memory_enabled = false\n"
    assert (path.stat().st_mode & 0o777) == 0o600


def test_a_linked_global_file_is_written_where_it_points(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "kin.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text("memory_enabled = true # from dotfiles\n")
    settings(tmp_path).parent.mkdir()
    settings(tmp_path).symlink_to(dotfiles)
    set_memory_enabled(False, tmp_path)
    assert settings(tmp_path).is_symlink()
    assert dotfiles.read_text() == "memory_enabled = false # from dotfiles\n"


@pytest.mark.parametrize(
    "text",
    [
        "[broken\n",
        "memory_enabled = false\nmemory_enabled = true\n",
        'memory_enabled = """\ntrue\n"""\n',
        '"memory_enabled" = true\n',
    ],
)
def test_a_file_that_cannot_be_changed_safely_is_left_alone(tmp_path: Path, text: str) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(SettingsEditError) as err:
        set_memory_enabled(False, tmp_path)
    assert path.read_text() == text
    assert str(err.value).startswith(str(path)) and "Error" not in str(err.value)


def test_a_project_settings_file_is_never_written(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".kin").mkdir(parents=True)
    project = repo / ".kin" / "settings.toml"
    project.write_text("memory_enabled = true\n")
    set_memory_enabled(False, tmp_path)
    assert project.read_text() == "memory_enabled = true\n"
    assert settings(tmp_path).read_text() == "memory_enabled = false\n"
    # a project file can only make things stricter: its `true` does not turn the user's `false` back on
    assert not effective_settings([str(repo)], home=tmp_path).memory_enabled


def test_a_broken_value_of_the_switch_itself_is_replaced(tmp_path: Path) -> None:
    path = settings(tmp_path)
    path.parent.mkdir()
    path.write_text("memory_enabled = yes  # typo\n")
    set_memory_enabled(True, tmp_path)
    assert path.read_text() == "memory_enabled = true  # typo\n"


def test_edited_is_pure_over_bytes() -> None:
    assert edited(b"", True) == b"memory_enabled = true\n"
    assert edited(b"memory_enabled = false\n", True) == b"memory_enabled = true\n"
