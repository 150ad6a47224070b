"""One reading of a workspace value everywhere (editor setting, `--workspace`, a command's argument):
`none` is the operator's view, `global` itself, an absolute path canonical, anything else a label taken
verbatim, and what no stamp could carry is refused. Unsafe stamps are flagged the same way (KM304)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.editor_settings import parse_settings
from kin_memory.store.workspace import (
    WorkspaceValueError,
    active_workspaces,
    cli_workspace,
    stamp_kind,
    unsafe_stamp,
    visibility,
    workspace_value,
)


def test_labels_are_verbatim_and_paths_canonical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "team-infra").mkdir()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "team-infra")
    monkeypatch.chdir(tmp_path)  # a folder named like the label here changes nothing
    assert workspace_value("team-infra") == ("team-infra",)
    assert workspace_value("Team Infra") == ("Team Infra",)
    assert workspace_value("global") == ("global",)
    assert workspace_value("none") == () and workspace_value("") == ()
    assert workspace_value(str(link)) == (os.path.realpath(tmp_path / "team-infra"),)


@pytest.mark.parametrize("value", ["src/app", ".", "./app", "../app", ".infra", "a/b/c"])
def test_relative_paths_are_refused(value: str) -> None:
    with pytest.raises(WorkspaceValueError, match="is a relative path"):
        workspace_value(value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("team\u202einfra", "bidirectional"),
        ("team\u200binfra", "invisible"),
        ("team\x1binfra", "control"),
        (" team-infra", "repeated spaces"),
        ("team  infra", "repeated spaces"),
        ("x" * 5000, "over 4096 bytes"),
    ],
)
def test_unsafe_labels_are_refused_and_flagged(value: str, reason: str) -> None:
    with pytest.raises(WorkspaceValueError, match=reason):
        workspace_value(value)
    assert reason in (unsafe_stamp(value) or "") and stamp_kind(value) == "invalid"


def test_the_message_shows_hostile_characters_escaped() -> None:
    with pytest.raises(WorkspaceValueError) as err:
        workspace_value("a\u202eb")
    assert "\u202e" not in str(err.value) and "a\\u202eb" in str(err.value)


def test_a_label_setting_and_flag_make_a_label_active(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    assert active_workspaces([str(tmp_path)], root, "team-infra") == ("team-infra",)
    assert active_workspaces([str(tmp_path)], root, "none") == ()
    assert cli_workspace("team-infra", root, cwd=str(tmp_path)) == "team-infra"
    assert cli_workspace("none", root, cwd=str(tmp_path)) is None
    assert visibility("team-infra", ("team-infra",)).scope == "this workspace"
    assert not visibility("team-infra", ("/src/app",)).visible


def test_the_editor_setting_refuses_a_relative_path_and_keeps_a_label() -> None:
    settings, problems = parse_settings({"workspace": "team-infra"})
    assert settings.workspace == "team-infra" and problems == []
    settings, problems = parse_settings({"workspace": "src/app"})
    assert settings.workspace is None
    assert [p.expected for p in problems] == ["expected an absolute path, global, none or a label without /"]
