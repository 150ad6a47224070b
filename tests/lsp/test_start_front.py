"""The start-up front (lsp/startup/front.py): on a warm start the server answers `initialize`, asks for the
settings and streams the store's diagnostics before its LSP stack is loaded, and what the editor gets is
exactly what the server would have said without it."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

from kin_memory.lsp.startup.handshake import FILE_NAME, handshake_key
from support.memfiles import memory, write
from support.rawlsp import RawClient


def _store(tmp_path: Path, word: str) -> tuple[Path, dict[str, str]]:
    store = tmp_path / "memory"
    for i in range(60):
        write(store, f"notes/n{i:03}.md", memory("episodic", f"# Note {i}\n\nroutine filler text {i}\n"))
    write(store, "facts/fresh.md", memory("project-fact", f"# Fresh\n\nThe {word} service owns billing.\n"))
    write(store, "broken.md", "---\ncategory: [unclosed\n---\n# Broken\n")  # a finding to publish
    env = {**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # where the remembered answers go
    return store, env


def _caps(encodings: object = None) -> dict:
    caps: dict = {"window": {"workDoneProgress": False}, "workspace": {"configuration": True}}
    if encodings:
        caps["general"] = {"positionEncodings": encodings}
    return caps


def _session(env: dict[str, str], encodings: object = None, settings: dict | None = None) -> dict:
    """One editor session to the end: what it received, and what it asked."""
    client = RawClient(env)
    asked: list[dict] = []

    def configuration(params: dict) -> list:
        asked.append(params)
        return [settings]

    client.responders["workspace/configuration"] = configuration
    caps = _caps(encodings)
    try:
        rid = client.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": caps, "workspaceFolders": []}
        )
        reply = client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        client.wait_checked()
        client.wait(lambda m: "recall index:" in str(m.get("params", {}).get("message", "")), 60)
        search = client.call(
            "workspace/executeCommand",
            {"command": "kin.memory.search", "arguments": [{"query": env["WORD"], "workspace": "none"}]},
            60,
        )
        with client.cond:
            messages = list(client.messages)
    finally:
        stderr = client.close()
    return {
        "reply": reply,
        "answers": [m for m in messages if m.get("id") == 1 and "method" not in m],
        "diagnostics": {
            m["params"]["uri"]: m["params"]["diagnostics"]
            for m in messages
            if m.get("method") == "textDocument/publishDiagnostics"
        },  # fmt: skip
        "logs": [m["params"]["message"] for m in messages if m.get("method") == "window/logMessage"],
        "asked": asked,
        "search": search["result"],
        "exit": client.proc.returncode,
        "stderr": stderr,
    }


def test_a_warm_start_answers_before_the_lsp_stack_and_says_the_same(tmp_path: Path) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    first = _session(env)
    # The very first start: the front answered with this code's answer (lsp/startup/capabilities.py),
    # and pygls's own answer was the same (it would have been kept for the next start otherwise).
    assert len(first["answers"]) == 1 and len(first["asked"]) == 1
    assert not (tmp_path / "cache" / "kin-memory" / FILE_NAME).exists()
    second = _session(env)

    # The same answer, once: the front's, and pygls's own was dropped.
    assert len(second["answers"]) == 1
    assert second["reply"]["result"] == first["reply"]["result"]
    # The same diagnostics, the broken memory's included.
    assert second["diagnostics"] == first["diagnostics"]
    assert any(uri.endswith("/broken.md") and diags for uri, diags in second["diagnostics"].items())
    # The settings were asked once, by the front.
    assert len(second["asked"]) == 1
    # The index was current: said so at once, and recall answers completely.
    assert any("recall index: 0 of" in line and "(current at start)" in line for line in second["logs"])
    assert second["search"]["complete"] is True
    assert second["search"]["results"][0]["path"] == "/memories/facts/fresh.md"
    assert sum("checked in" in line for line in second["logs"]) == 1
    # `shutdown` and `exit` end it cleanly.
    assert second["exit"] == 0, second["stderr"]


def test_another_client_is_answered_by_the_server_and_remembered(tmp_path: Path) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    utf8 = _session(env, encodings=["utf-8"])  # answered by the front: nothing to keep
    assert utf8["reply"]["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert len(utf8["answers"]) == 1 and not (tmp_path / "cache" / "kin-memory" / FILE_NAME).exists()
    # Capabilities of a shape the front does not judge (a string where a list belongs): pygls answers.
    odd = _session(env, encodings="utf-8")
    assert len(odd["answers"]) == 1 and odd["reply"]["result"]["capabilities"]["positionEncoding"] == "utf-16"
    kept = json.loads((tmp_path / "cache" / "kin-memory" / FILE_NAME).read_text())["entries"]
    assert len(kept) == 1  # pygls's answer to that client
    again = _session(env, encodings="utf-8")
    assert any("(current at start)" in line for line in again["logs"])  # the front's check
    assert again["reply"]["result"] == odd["reply"]["result"]
    assert len(again["answers"]) == 1
    assert again["diagnostics"] == utf8["diagnostics"]


def test_settings_the_front_pulled_decide_the_first_check(tmp_path: Path) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    _, env = _store(tmp_path, word)
    env["WORD"] = word
    first = _session(env)
    codes = {
        d["code"] for uri, diags in first["diagnostics"].items() if uri.endswith("/broken.md") for d in diags
    }
    assert codes
    quiet = _session(env, settings={"severity": dict.fromkeys(codes, "off")})
    assert len(quiet["answers"]) == 1 and len(quiet["asked"]) == 1  # the front answered and asked
    assert not any(uri.endswith("/broken.md") and diags for uri, diags in quiet["diagnostics"].items())
    loud = _session(env)
    assert loud["diagnostics"] == first["diagnostics"]


def test_a_memory_changed_while_the_editor_was_closed_is_synced_not_assumed(tmp_path: Path) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    _session(env)
    newer = "zq" + uuid.uuid4().hex[:10]
    write(store, "facts/newer.md", memory("project-fact", f"# Newer\n\nThe {newer} queue drains nightly.\n"))
    env["WORD"] = newer
    after = _session(env)
    assert not any("(current at start)" in line for line in after["logs"])
    assert any("recall index: 1 of" in line for line in after["logs"]), after["logs"]
    assert after["search"]["results"][0]["path"] == "/memories/facts/newer.md"


def test_a_planted_answer_file_is_not_used(tmp_path: Path) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    first = _session(env)
    kept = tmp_path / "cache" / "kin-memory" / FILE_NAME
    kept.parent.mkdir(parents=True, exist_ok=True)
    # What an attacker would like the editor to be told, under the key this client's answer has.
    key = handshake_key({"capabilities": _caps()})
    data = {"entries": [{"key": key, "result": {"capabilities": {"evil": True}}}]}
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text(json.dumps(data))
    kept.write_text(json.dumps(data))
    # The key is right, but no answer this server gives: ignored, the answer made as on a first start.
    assert _session(env)["reply"]["result"] == first["reply"]["result"]
    kept.unlink()
    kept.symlink_to(elsewhere)  # a link in the hidden folder is never followed
    linked = _session(env)
    assert linked["reply"]["result"] == first["reply"]["result"]
    kept.unlink()
    kept.write_text("{not json")
    garbled = _session(env)
    assert garbled["reply"]["result"] == first["reply"]["result"]
    assert garbled["diagnostics"] == first["diagnostics"]


def _early_session(env: dict[str, str], requests: list[tuple[str, dict]]) -> tuple[list[dict], list[dict]]:
    """A warm start that sends `requests` right after `initialized` (no wait): their answers, in request
    order, and every message the server sent."""
    client = RawClient(env)
    client.responders["workspace/configuration"] = lambda params: [None]
    caps = {"window": {"workDoneProgress": False}, "workspace": {"configuration": True}}
    try:
        rid = client.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": caps, "workspaceFolders": []}
        )
        client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        ids = [client.request(method, params) for method, params in requests]
        answers = [client.wait(lambda m, i=i: m.get("id") == i and "method" not in m, 60) for i in ids]
        client.wait_checked()
        client.call(
            "workspace/executeCommand", {"command": "kin.memory.search", "arguments": [{"query": "x"}]}
        )
        with client.cond:
            messages = list(client.messages)
    finally:
        client.close()
    return answers, messages


def _search(query: str) -> tuple[str, dict]:
    return "workspace/executeCommand", {
        "command": "kin.memory.search",
        "arguments": [{"query": query, "workspace": "none"}],
    }


def test_a_search_sent_at_once_after_a_warm_start_is_answered_once_and_completely(tmp_path: Path) -> None:
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    # The front answers by words (the semantic layer is not loaded that early); the server, once its layer
    # is filled, adds memories close in meaning. The words' answers are what is compared here.
    env["KIN_RECALL_SEMANTIC"] = "off"
    _session(env)
    answers, messages = _early_session(env, [_search(word), _search("routine filler"), _search(word)])
    first, filler, again = (a["result"] for a in answers)
    assert first["complete"] is True and [h["path"] for h in first["results"]] == ["/memories/facts/fresh.md"]
    assert first == again
    assert filler["complete"] is True and len(filler["results"]) == 5
    # One answer per request: none answered twice (by the front and again by the server).
    replies = [m["id"] for m in messages if "method" not in m]
    assert len(replies) == len(set(replies))
    # The answers are the server's: the same search once it is loaded gives the same result.
    late, _ = _early_session(env, [])
    assert late == []
    client = RawClient(env)
    try:
        client.initialize()
        client.wait_checked()
        client.wait(lambda m: "recall index:" in str(m.get("params", {}).get("message", "")), 60)
        time.sleep(1.5)  # past the start-up: the server's own command answers
        assert client.call(*_search(word))["result"] == first
    finally:
        client.close()


def test_a_search_after_a_tool_write_sent_at_once_finds_what_was_written(tmp_path: Path) -> None:
    """What could change a search's answer, sent before it, is done before it: the front answers nothing
    after it, and the server runs the search once the write is done (commands/base.py: WriteOrder)."""
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    _session(env)
    newer = "zq" + uuid.uuid4().hex[:10]
    create = {"command": "create", "path": "/memories/facts/written.md",
              "file_text": f"---\ncategory: project-fact\n---\n# Written\n\nThe {newer} cache is warm.\n"}  # fmt: skip
    answers, _ = _early_session(
        env,
        [
            _search(word),
            ("workspace/executeCommand", {"command": "kin.memory.tool", "arguments": [create]}),
            _search(newer),
        ],  # fmt: skip
    )
    assert "error" not in answers[1], answers[1]
    assert (store / "facts" / "written.md").is_file()
    found = answers[2]["result"]
    assert "/memories/facts/written.md" in [h["path"] for h in found["results"]] or found["complete"] is False


def test_a_memory_written_while_the_lsp_stack_loads_gets_its_diagnostics(tmp_path: Path) -> None:
    """The front published the store; the editor then sends a settings change (Neovim does at once) and a
    memory is written before the LSP stack has loaded: the settings' reload must not take the new file in
    unseen (its diagnostics were never published, and the catch-up found the store matching the disk)."""
    store, env = _store(tmp_path, "zq" + uuid.uuid4().hex[:10])
    client = RawClient(env)
    client.responders["workspace/configuration"] = lambda params: [None]
    try:
        rid = client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": _caps(["utf-8", "utf-16"]),
                "workspaceFolders": [],
            },
        )
        assert "result" in client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        client.notify("workspace/didChangeConfiguration", {"settings": {"kinMemory": []}})
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"].endswith("broken.md")
            ),
            30,
        )
        time.sleep(0.3)
        write(
            store, "facts/agent-wrote.md", "---\ncategory: epsiodic\nworkspace: global\n---\n# Agent\n\nnew\n"
        )
        published = client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"].endswith("/facts/agent-wrote.md")
            ),
            10,
        )
        assert {d["code"] for d in published["params"]["diagnostics"]} >= {"KM201"}
    finally:
        client.close()


def test_a_few_files_written_or_removed_while_closed_are_indexed_before_the_check_ends(
    tmp_path: Path,
) -> None:
    """The workers tell how the recall index compares with their files before they send any: when that
    names every change (a file written, one removed), the front writes them at once, and a search sent
    right after `initialized` is answered completely, with the new memory and without the removed one,
    while the diagnostics are still coming."""
    word = "zq" + uuid.uuid4().hex[:10]
    store, env = _store(tmp_path, word)
    env["WORD"] = word
    _session(env)
    newer = "zq" + uuid.uuid4().hex[:10]
    write(store, "facts/newer.md", memory("project-fact", f"# Newer\n\nThe {newer} queue drains nightly.\n"))
    (store / "notes" / "n005.md").unlink()
    answers, messages = _early_session(env, [_search(newer), _search("routine filler 5")])
    found, filler = (a["result"] for a in answers)
    assert found["complete"] is True and [h["path"] for h in found["results"]] == ["/memories/facts/newer.md"]
    assert filler["complete"] is True
    assert "/memories/notes/n005.md" not in [h["path"] for h in filler["results"]]
    logs = [m["params"]["message"] for m in messages if m.get("method") == "window/logMessage"]
    synced = next(i for i, line in enumerate(logs) if "recall index:" in line)
    checked = next(i for i, line in enumerate(logs) if "memories in" in line and "checked in" in line)
    assert "recall index: 1 of 62 memories (re)indexed, 1 removed" in logs[synced]
    assert synced < checked, logs  # said (and written) before the check was done


def test_the_fronts_early_answer_says_it_matched_words_only_while_the_layer_is_wanted(
    tmp_path: Path, monkeypatch
) -> None:
    import threading
    from concurrent.futures import Future

    from kin_memory.lsp.session import Session
    from kin_memory.lsp.startup.early import LOADING_NOTE, EarlySearch
    from kin_memory.recall.service import Recall, sync_quietly

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    word = "zq" + uuid.uuid4().hex[:10]
    store, _env = _store(tmp_path, word)
    sync_quietly(Recall(store))  # the index a previous run left

    def early(semantic: str) -> dict:
        monkeypatch.setenv("KIN_RECALL_SEMANTIC", semantic)
        front = EarlySearch(Session(str(store)), None, None, None, [], 0, Future(), threading.Event())  # type: ignore[arg-type]
        answer = front._search({"query": word, "workspace": "none"})
        assert isinstance(answer, dict)
        return answer

    on = early("on")
    assert [h["path"] for h in on["results"]] == ["/memories/facts/fresh.md"]
    assert on["note"] == LOADING_NOTE
    off = early("off")
    assert off["results"] == on["results"] and off.get("note") is None
