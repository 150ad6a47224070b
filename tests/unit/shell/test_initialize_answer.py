"""The `initialize` answer written out for the start-up front (lsp/startup/capabilities.py) is the one
pygls gives for this server, for every client shape it judges; any other shape is left to pygls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.lsp.startup.capabilities import initialize_answer

# Client capabilities as real editors and odd clients send them (what matters: encodings, willRename).
CLIENTS: dict[str, dict] = {
    "bare": {},
    "vscode": {
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {"configuration": True, "fileOperations": {"willRename": True, "didRename": True}},
        "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True}},
    },
    "neovim": {
        "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
        "workspace": {"configuration": True, "workspaceFolders": True},
        "textDocument": {"rename": {"prepareSupport": True}},
    },
    "utf-32 first": {"general": {"positionEncodings": ["utf-32", "utf-8"]}},
    "unknown encodings only": {"general": {"positionEncodings": ["ascii"]}},
    "no encodings": {"general": {}},
    "rename off": {"workspace": {"fileOperations": {"willRename": False, "willCreate": True}}},
    "will save only": {"textDocument": {"synchronization": {"willSave": False, "didSave": True}}},
    "notebooks": {"notebookDocument": {"synchronization": {"dynamicRegistration": True}}},
}

PYGLS_ANSWERS = """
import asyncio, json, sys
from kin_memory.lsp.server import create_server
clients = json.loads(sys.argv[2])
out = {}
for name, caps in clients.items():
    server = create_server(root=sys.argv[1])
    proto = server.protocol
    sent = []
    proto._send_data = sent.append
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": None, "capabilities": caps}}
    async def answer():
        proto.handle_message(proto.structure_message(message))
        while not sent:
            await asyncio.sleep(0.005)
    asyncio.run(asyncio.wait_for(answer(), 30))
    out[name] = json.loads(json.dumps(sent[0], default=proto._serialize_message))["result"]
print(json.dumps(out))
sys.stdout.flush()
import os; os._exit(0)
"""


@pytest.fixture(scope="module")
def pygls_answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("store") / "memory"
    root.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PYGLS_ANSWERS, str(root), json.dumps(CLIENTS)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.parametrize("client", list(CLIENTS))
def test_the_written_answer_is_pygls_answer(client: str, pygls_answers: dict[str, dict]) -> None:
    params = {"processId": None, "rootUri": None, "capabilities": CLIENTS[client]}
    assert initialize_answer(params) == pygls_answers[client]


def test_what_the_answer_varies_with(pygls_answers: dict[str, dict]) -> None:
    # The cases above would not catch a constant answer if these did not differ.
    encodings = {name: a["capabilities"]["positionEncoding"] for name, a in pygls_answers.items()}
    assert encodings["neovim"] == "utf-8" and encodings["utf-32 first"] == "utf-32"
    assert encodings["unknown encodings only"] == "utf-16" == encodings["bare"]
    operations = {name: a["capabilities"]["workspace"]["fileOperations"] for name, a in pygls_answers.items()}
    assert "willRename" in operations["vscode"] and operations["rename off"] == {} == operations["bare"]
    sync = {name: a["capabilities"]["textDocumentSync"] for name, a in pygls_answers.items()}
    assert sync["vscode"]["willSaveWaitUntil"] is False and "willSaveWaitUntil" not in sync["will save only"]
    assert sync["will save only"]["willSave"] is False and "willSave" not in sync["bare"]


@pytest.mark.parametrize(
    "caps",
    [
        {"general": {"positionEncodings": "utf-8"}},
        {"general": {"positionEncodings": [8]}},
        {"general": []},
        {"workspace": {"fileOperations": {"willRename": "yes"}}},
        {"workspace": {"fileOperations": []}},
        {"workspace": True},
        {"textDocument": {"synchronization": {"willSave": 1}}},
        {"textDocument": "x"},
        None,
    ],
)
def test_a_shape_not_judged_is_left_to_pygls(caps: object) -> None:
    assert initialize_answer({"processId": None, "capabilities": caps}) is None
    assert initialize_answer(["not", "an", "object"]) is None


def test_the_answer_is_known_without_the_lsp_stack(tmp_path: Path) -> None:
    code = (
        "import sys, kin_memory.lsp.startup.capabilities; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lsprotocol', 'pygls', 'cattrs')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
