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


HOSTILE_STAMPS = [
    "/home/me/src/webapp",
    "global",
    "webapp",
    "web  app",
    " webapp",
    "~/src/webapp",
    "./webapp",
    "/home/me/\ud800src",  # a lone surrogate: not valid UTF-8
    "/home/me/\x1b[2Jsrc",
    "label\u202eevil",
    "tag\U000e0041s",
    "x" * 4096,
    "x" * 4097,  # over 4096 bytes, and past the remembered length
    "é" * 2049,  # 4098 bytes in 2049 characters
    "/" + "a" * 300,
    "",
]


@pytest.mark.parametrize("stamp", HOSTILE_STAMPS)
def test_a_remembered_stamp_kind_is_the_kind_worked_out_afresh(stamp: str) -> None:
    from kin_memory.store import stamps

    afresh = stamps._kind(stamp)
    # asked twice: the second answer comes from the memo when the stamp is short enough to be kept
    assert stamps.stamp_kind(stamp) == afresh
    assert stamps.stamp_kind(stamp) == afresh
    slow_reason = next(
        (why for test, why in [
            (len(stamp.encode("utf-8", "surrogatepass")) > stamps.MAX_STAMP_BYTES, "is over 4096 bytes"),
            (any("\ud800" <= ch <= "\udfff" for ch in stamp), "is not valid UTF-8"),
        ] if test),
        None,
    )  # fmt: skip
    if slow_reason is not None:
        assert unsafe_stamp(stamp) == slow_reason and afresh == "invalid"


def test_non_string_stamps_are_invalid_and_never_remembered() -> None:
    from kin_memory.store import stamps

    before = stamps._memo_kind.cache_info().currsize
    for value in (1, True, 1.0, ("invalid",), None):
        assert stamps.stamp_kind(value) == ("absent" if value is None else "invalid")
    assert stamps._memo_kind.cache_info().currsize == before
