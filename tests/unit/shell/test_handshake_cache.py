"""The remembered `initialize` answers (lsp/startup/handshake.py): used only when the file is exactly what
this code writes, the answer is one this server gives and its encoding is one the client takes; a file
from another build, a planted or malformed one, a link, a folder others may write in or an oversized file
is ignored, and the answer is then made as on a first start."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kin_memory import __version__
from kin_memory.caches import findings as findings_cache
from kin_memory.lsp.startup.capabilities import initialize_answer, is_server_answer
from kin_memory.lsp.startup.front import Front
from kin_memory.lsp.startup.handshake import (
    FILE_NAME,
    KEPT,
    MAX_BYTES,
    cache_dir,
    handshake_key,
    remember,
    remembered,
)
from kin_memory.lsp.wire import FdReader, Outlet, frame, next_body

PARAMS = {"processId": None, "capabilities": {"general": {"positionEncodings": ["utf-16", "utf-8"]}}}
KEY = handshake_key(PARAMS) or ""
ANSWER = initialize_answer({"capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
COMPUTED = initialize_answer(PARAMS)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _plant(data: object, raw: bytes | None = None) -> Path:
    kept = cache_dir() / FILE_NAME
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(raw if raw is not None else json.dumps(data).encode())
    return kept


def _sent_answer(tmp_path: Path) -> dict:
    """What the start-up front answers `initialize` with, over real pipes."""
    from kin_memory.lsp.session import Session

    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    os.write(to_w, frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": PARAMS}))
    os.close(to_w)
    root = tmp_path / "memory"
    root.mkdir(exist_ok=True)
    Front(lambda: Session(str(root)), None, FdReader(to_r), Outlet(from_w)).run()
    os.close(from_w)
    body = next_body(FdReader(from_r))
    assert body is not None
    return json.loads(body)["result"]


def test_a_remembered_answer_of_this_server_is_used(tmp_path: Path) -> None:
    assert ANSWER is not None and ANSWER != COMPUTED
    remember(KEY, ANSWER)
    assert remembered(KEY, PARAMS) == ANSWER
    assert _sent_answer(tmp_path) == ANSWER  # the check below would pass for a cache never used


def _evil(change) -> dict:
    answer = json.loads(json.dumps(ANSWER))
    change(answer)
    return answer


PLANTED = {
    "an extra capability": lambda a: a["capabilities"].update(evil=True),
    "one taken away": lambda a: a["capabilities"].pop("hoverProvider"),
    "true written as 1": lambda a: a["capabilities"].update(hoverProvider=1),
    "another command": lambda a: a["capabilities"]["executeCommandProvider"]["commands"].append("x.run"),
    "another server": lambda a: a["serverInfo"].update(name="other"),
    "another version": lambda a: a["serverInfo"].update(version=__version__ + ".1"),
    "an unknown encoding": lambda a: a["capabilities"].update(positionEncoding="ascii"),
    "wider rename filters": lambda a: a["capabilities"]["workspace"]["fileOperations"].update(
        willRename={"filters": [{"pattern": {"glob": "**"}}]}
    ),
    "change 1 for 2": lambda a: a["capabilities"]["textDocumentSync"].update(change=1),
    "an extra top-level key": lambda a: a.update(message="hello"),
}


@pytest.mark.parametrize("how", list(PLANTED))
def test_a_planted_answer_under_the_right_key_is_never_sent(how: str, tmp_path: Path) -> None:
    planted = _evil(PLANTED[how])
    assert not is_server_answer(planted)
    _plant({"entries": [{"key": KEY, "result": planted}]})
    assert remembered(KEY, PARAMS) is None
    assert _sent_answer(tmp_path) == COMPUTED


@pytest.mark.parametrize(
    "data",
    [
        {"entries": [{"key": KEY, "result": ANSWER}], "more": 1},
        {"entries": [{"key": KEY, "result": ANSWER, "note": "x"}]},
        {"entries": [{"key": KEY.upper(), "result": ANSWER}]},
        {"entries": [{"key": KEY, "result": ANSWER}] * (KEPT + 1)},
        {"entries": [{"key": KEY, "result": ANSWER}, "x"]},
        [{"key": KEY, "result": ANSWER}],
    ],
    ids=[
        "extra key",
        "extra entry key",
        "key not the digest form",
        "too many entries",
        "not an entry",
        "a list",
    ],
)
def test_a_file_not_exactly_of_the_written_shape_is_ignored(data: object) -> None:
    _plant(data)
    assert remembered(KEY, PARAMS) is None


def test_an_answer_from_another_build_never_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as build:
        build.setattr(findings_cache, "_code_version", "another-build")
        other = handshake_key(PARAMS) or ""
        remember(other, ANSWER)
    assert other != KEY and remembered(other) == ANSWER
    assert remembered(KEY, PARAMS) is None


def test_an_encoding_the_client_does_not_take_is_not_used(tmp_path: Path) -> None:
    utf32 = initialize_answer({"capabilities": {"general": {"positionEncodings": ["utf-32"]}}})
    remember(KEY, utf32)  # PARAMS offers UTF-16 and UTF-8 only
    assert remembered(KEY) == utf32 and remembered(KEY, PARAMS) is None
    assert _sent_answer(tmp_path) == COMPUTED


def test_a_linked_or_shared_cache_folder_is_not_read(tmp_path: Path) -> None:
    remember(KEY, ANSWER)
    folder = cache_dir()
    moved = tmp_path / "elsewhere"
    folder.rename(moved)
    folder.symlink_to(moved)
    assert remembered(KEY, PARAMS) is None  # the folder is a link
    folder.unlink()
    moved.rename(folder)
    assert remembered(KEY, PARAMS) == ANSWER
    folder.chmod(0o777)
    assert remembered(KEY, PARAMS) is None  # anyone may write in it
    folder.chmod(0o700)
    (folder / FILE_NAME).rename(moved.with_suffix(".json"))
    (folder / FILE_NAME).symlink_to(moved.with_suffix(".json"))
    assert remembered(KEY, PARAMS) is None  # the file is a link


def test_an_oversized_file_is_not_read() -> None:
    entry = json.dumps({"entries": [{"key": KEY, "result": ANSWER}]}).encode()
    _plant(None, entry[:-1] + b" " * MAX_BYTES + b"}")  # valid JSON, past the bound
    assert remembered(KEY, PARAMS) is None
    _plant(None, entry)
    assert remembered(KEY, PARAMS) == ANSWER


def test_only_answers_this_server_gives_are_kept() -> None:
    remember(KEY, {"capabilities": {"evil": True}})
    assert not (cache_dir() / FILE_NAME).exists()
    clients = [{}, {"general": {"positionEncodings": ["utf-32"]}}, {"workspace": {"fileOperations": {"willRename": True}}},
               {"textDocument": {"synchronization": {"willSave": True}}}]  # fmt: skip
    assert all(is_server_answer(initialize_answer({"capabilities": c})) for c in clients)


def test_the_cache_keeps_bytes_and_the_server_says_what_is_valid() -> None:
    """caches/handshake.py knows nothing of the protocol: the validation is passed in, and a file with one
    entry the caller refuses is ignored as a whole."""
    from kin_memory.caches import handshake as kept

    remember(KEY, ANSWER)
    assert kept.remembered(KEY, is_server_answer) == ANSWER
    assert kept.remembered(KEY, lambda result: False) is None
    kept.remember(KEY, {"anything": 1}, lambda result: True)  # another caller's rule
    assert kept.remembered(KEY, lambda result: True) == {"anything": 1}
    assert remembered(KEY, PARAMS) is None  # not an answer this server gives: never sent
