"""A repository's identities, read from real git repositories: the same for two clones at different
paths, different for an unrelated repository, none for a plain folder, never an error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.store.repo_identity import comparable, identities, normalized_remote
from support.gitrepos import clone, git, isolate_git, make_origin


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Owner/Name.git",
        "https://github.com/Owner/Name",
        "https://GitHub.COM/Owner/Name.git/",
        "ssh://git@github.com/Owner/Name.git",
        "ssh://git@github.com:22/Owner/Name",
        "https://user:s3cret-token@github.com/Owner/Name.git",
        "git+ssh://git@github.com/Owner/Name.git",
        "git://github.com/Owner/Name",
    ],
)
def test_spellings_of_one_address_agree(url: str) -> None:
    assert normalized_remote(url) == "url:github.com/Owner/Name"


def test_credentials_are_never_kept() -> None:
    found = normalized_remote("https://alice:s3cret-token@git.example.com/team/app.git")
    assert found == "url:git.example.com/team/app"
    assert "s3cret" not in found and "alice" not in found


@pytest.mark.parametrize(
    "url",
    [
        "",
        "ftp://host/a/b",
        "https://host/",
        "https://host/a/../b",
        "git@host:../x",
        "https://ho\x1bst/a",
        "x" * 3000,
    ],
)
def test_what_is_no_address_is_no_identity(url: str) -> None:
    assert normalized_remote(url) is None


def test_a_local_remote_is_its_realpath(tmp_path: Path) -> None:
    bare = tmp_path / "remotes" / "api.git"
    bare.mkdir(parents=True)
    link = tmp_path / "link.git"
    link.symlink_to(bare)
    real = os.path.realpath(bare)
    assert normalized_remote(str(link)) == "path:" + real
    assert normalized_remote("file://" + str(bare)) == "path:" + real
    # relative to the working tree, as git reads it
    assert normalized_remote("../remotes/api.git", str(tmp_path / "work")) == "path:" + real


def test_two_clones_share_their_identities_an_unrelated_repository_does_not(tmp_path: Path) -> None:
    origin = make_origin(tmp_path)
    laptop = clone(origin, tmp_path / "laptop" / "src" / "api")
    desktop = clone(origin, tmp_path / "desktop" / "code" / "api")
    other = clone(make_origin(tmp_path, "other"), tmp_path / "desktop" / "code" / "other")
    a, b, c = identities(laptop), identities(desktop), identities(other)
    assert a == b == ("path:" + os.path.realpath(origin),)  # an origin: the address alone
    assert not set(a) & set(c)


def test_a_fork_is_not_its_upstream_though_it_shares_the_first_commit(tmp_path: Path) -> None:
    origin = make_origin(tmp_path)
    upstream = clone(origin, tmp_path / "laptop" / "api")
    fork = clone(origin, tmp_path / "desktop" / "api")
    git(Path(fork), "remote", "set-url", "origin", "git@git.example.com:mallory/api.git")
    git(Path(upstream), "remote", "set-url", "origin", "git@git.example.com:team/api.git")
    assert identities(fork) == ("url:git.example.com/mallory/api",)
    assert not set(identities(upstream)) & set(identities(fork))
    # a machine file of an earlier version lists the first commit beside the address: not compared
    root = "root:" + git(Path(fork), "rev-list", "--max-parents=0", "HEAD")
    assert comparable(frozenset({"url:git.example.com/mallory/api", root})) == {
        "url:git.example.com/mallory/api"
    }


def test_a_first_commit_counts_only_when_neither_has_an_origin(tmp_path: Path) -> None:
    origin = make_origin(tmp_path)
    laptop = clone(origin, tmp_path / "laptop" / "api")
    desktop = clone(origin, tmp_path / "desktop" / "api")
    for folder in (laptop, desktop):
        git(Path(folder), "remote", "remove", "origin")
    root = git(Path(laptop), "rev-list", "--max-parents=0", "HEAD")
    assert identities(laptop) == identities(desktop) == ("root:" + root,)
    git(Path(desktop), "remote", "add", "origin", "git@git.example.com:team/api.git")
    assert not set(identities(laptop)) & set(identities(desktop))


def test_a_folder_below_the_top_carries_its_place(tmp_path: Path) -> None:
    origin = make_origin(tmp_path)
    top = clone(origin, tmp_path / "laptop" / "api")
    (Path(top) / "packages" / "web").mkdir(parents=True)
    (Path(top) / "packages" / "cli").mkdir(parents=True)
    web = identities(os.path.join(top, "packages", "web"))
    assert web and all(i.endswith("#packages/web") for i in web)
    assert not set(web) & set(identities(os.path.join(top, "packages", "cli")))
    assert not set(web) & set(identities(top))


def test_no_identity_without_a_repository_or_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert identities(str(plain)) == ()
    assert identities(str(tmp_path / "missing")) == ()
    assert identities("relative/path") == ()
    top = clone(make_origin(tmp_path), tmp_path / "api")
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))
    assert identities(top) == ()


def test_an_inherited_git_dir_does_not_redirect_the_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server started from a git hook inherits GIT_DIR: the folder asked about is still the one read."""
    api = clone(make_origin(tmp_path), tmp_path / "api")
    other = clone(make_origin(tmp_path, "other"), tmp_path / "other")
    expected = identities(api)
    monkeypatch.setenv("GIT_DIR", os.path.join(other, ".git"))
    assert identities(api) == expected
