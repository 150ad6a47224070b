"""Remote addresses: only a folder, file://, ssh://, ssh's host:path, https:// and http://; transport
helpers (`fd::`, `ext::`) and other schemes are refused at once; the store is never its own remote; no
credential, query or fragment of an address reaches a message."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sync_machines import DEPLOY, Machine

from kin_memory.gitsync.engine import sync
from kin_memory.gitsync.git import SyncError
from kin_memory.store.repo_identity import normalized_remote


@pytest.mark.parametrize(
    "url",
    ["fd::0", "ext::sh -c touch% /tmp/kin-pwned", "ext::git-upload-pack %S", "git://127.0.0.1/x", "ftp://h/x",
     "foo::https://host/x", "file::/tmp/x"],
)  # fmt: skip
def test_a_transport_helper_or_another_scheme_is_refused_at_once(laptop: Machine, url: str) -> None:
    laptop.write("facts/a.md", DEPLOY)
    started = time.monotonic()
    with pytest.raises(SyncError) as caught:
        sync(laptop.root, remote=url)
    assert time.monotonic() - started < 10
    assert "must be a folder, file://, ssh://" in caught.value.message
    assert not Path("/tmp/kin-pwned").exists()


@pytest.mark.parametrize("inside", ["", "facts", ".git", "file"])
def test_the_store_is_never_its_own_remote(laptop: Machine, inside: str) -> None:
    laptop.write("facts/a.md", DEPLOY)
    url = "file://" + str(laptop.root) if inside == "file" else str(laptop.root / inside)
    with pytest.raises(SyncError) as caught:
        sync(laptop.root, remote=url)
    assert caught.value.message == "The store cannot be its own remote: give a repository outside the store."


def test_credentials_query_and_fragment_never_reach_a_message(laptop: Machine) -> None:
    laptop.write("facts/a.md", DEPLOY)
    url = "https://alice:pa55word@127.0.0.1:9/team/memory.git?access_token=T0KEN-xyz#frag"
    with pytest.raises(SyncError) as caught:
        sync(laptop.root, remote=url)
    said = caught.value.message
    assert "pa55word" not in said and "T0KEN" not in said and "frag" not in said and "alice" not in said


def test_a_token_spelt_in_an_ssh_address_is_never_an_identity() -> None:
    found = normalized_remote("bob:t0ken-abc@git.example.com:team/api.git")
    assert found == "url:git.example.com/team/api"
    assert normalized_remote("https://git.example.com/team/api.git?access_token=t0ken") == (
        "url:git.example.com/team/api"
    )
