"""Completion that completes: a value item's `textEdit` replaces the whole value on the line, so a partly
typed value is completed rather than appended to, and values the server would flag itself are not
offered (a gone repository, a path that is not canonical, an unsafe label, KM301/KM302/KM304)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "app"
    path.mkdir(parents=True)
    return Path(os.path.realpath(path))


@pytest.fixture
def store(tmp_path: Path, repo: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "facts/app.md", memory("project-fact", "# App\n\napp\n", str(repo)))
    write(root, "facts/gone.md", memory("project-fact", "# Gone\n\ngone\n", str(tmp_path / "moved-away")))
    write(root, "facts/slash.md", memory("project-fact", "# Slash\n\nslash\n", f"{repo}/"))
    write(root, "facts/relative.md", memory("project-fact", "# Rel\n\nrel\n", "src/app"))
    write(root, "facts/label.md", memory("project-fact", "# Label\n\nlabel\n", "team-infra"))
    write(root, "facts/bidi.md", memory("project-fact", "# Bidi\n\nbidi\n", '"team\\u202einfra"'))
    return root


def complete(client: RawClient, store: Path, rel: str, text: str, line: int, col: int) -> list[dict]:
    path = store / rel
    write(store, rel, text)
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
    )
    reply = client.call(
        "textDocument/completion",
        {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}},
    )
    return reply["result"]["items"]


def edits(items: list[dict]) -> dict[str, tuple[int, int, str]]:
    return {
        i["label"]: (i["textEdit"]["range"]["start"]["character"], i["textEdit"]["range"]["end"]["character"],
                     i["textEdit"]["newText"])
        for i in items
    }  # fmt: skip


def test_a_partly_typed_workspace_path_is_replaced_whole(client, store, repo) -> None:
    line = f"workspace: {str(repo)[:-1]}"
    items = complete(
        client, store, "facts/new.md", f"---\ncategory: project-fact\n{line}\n---\n# N\n", 2, len(line)
    )
    found = edits(items)
    assert found[str(repo)] == (11, len(line), str(repo))
    assert found["global"] == (11, len(line), "global")
    assert found["team-infra"] == (11, len(line), "team-infra")
    offered = set(found)
    assert not offered & {str(repo) + "/", "src/app", "team\u202einfra"}  # KM302, KM302, KM304
    assert not any("moved-away" in v for v in offered)  # KM301
    assert all(i["filterText"] == i["label"] for i in items)  # nothing quoted was typed


def test_a_partly_typed_category_is_replaced_and_a_comment_kept(client, store) -> None:
    text = "---\ncategory: project-f  # what it is\n---\n# N\n"
    found = edits(complete(client, store, "facts/new.md", text, 1, 19))
    assert found["project-fact"] == (10, 19, "project-fact")
    assert set(found) == {"project-fact", "preference", "episodic", "session"}


def test_the_cursor_in_the_middle_of_a_value_replaces_all_of_it(client, store) -> None:
    text = "---\ncategory: episodicc\n---\n# N\n"
    found = edits(complete(client, store, "facts/new.md", text, 1, 13))
    assert found["episodic"] == (10, 19, "episodic")


def test_right_after_the_colon_the_edit_adds_the_space(client, store) -> None:
    text = "---\ncategory:\n---\n# N\n"
    found = edits(complete(client, store, "facts/new.md", text, 1, 9))
    assert found["session"] == (9, 9, " session")


def test_a_quoted_value_is_filtered_with_its_quote_and_replaced_plain(client, store) -> None:
    text = '---\ncategory: project-fact\nworkspace: "team-in\n---\n# N\n'
    items = complete(client, store, "facts/new.md", text, 2, 19)
    [label] = [i for i in items if i["label"] == "team-infra"]
    assert label["filterText"] == '"team-infra'
    assert edits([label])["team-infra"] == (11, 19, "team-infra")


def test_a_preference_is_offered_only_global(client, store) -> None:
    text = "---\ncategory: preference\nworkspace: \n---\n# N\n"
    assert [i["label"] for i in complete(client, store, "prefs/new.md", text, 2, 11)] == ["global"]
