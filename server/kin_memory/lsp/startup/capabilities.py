"""The server's answer to `initialize`, known without the LSP stack.

The very first start of this code for a client (a new install, an upgrade) had no remembered answer
(handshake.py) and imported pygls to answer: half a second of CPU taken from the workers checking the
store on two cores. What pygls answers depends only on the features this server registers and, for
them, on two things the client says: the position encodings it takes and whether it sends
`workspace/willRenameFiles`. So the answer is written out here, and a test holds it equal to pygls's for
a range of clients. A client whose capabilities are not of the shapes judged here is answered by pygls.
"""

from __future__ import annotations

from typing import Any

from ... import __version__
from ..commands import names

SERVER_NAME = "kin-memory"
ENCODINGS = ("utf-8", "utf-16", "utf-32")  # what pygls converts positions for
DEFAULT_ENCODING = "utf-16"

# In the order create_server registers the command groups.
COMMANDS = (
    names.STORE + names.RECALL + names.TOOL + names.SWEEP + names.REFLECT + names.SESSIONS + names.PASSES
    + names.PROPOSALS + names.HISTORY + names.BULK + names.HEALTH + names.SYNC
)  # fmt: skip

# Where renames are watched: memories (files) and the folders holding them (features/renames.py).
RENAME_FILTERS = [
    {"scheme": "file", "pattern": {"glob": "**/*.md", "matches": "file"}},
    {"scheme": "file", "pattern": {"glob": "**", "matches": "folder"}},
]


def initialize_answer(params: object) -> dict[str, Any] | None:
    """The `InitializeResult` pygls would send for these params; None when the client's capabilities are
    not of a shape judged here."""
    if not isinstance(params, dict):
        return None
    caps = params.get("capabilities")
    if not isinstance(caps, dict):
        return None
    encoding = _encoding(caps)
    renames = _will_rename(caps)
    sync = _sync(caps)
    if encoding is None or renames is None or sync is None:
        return None
    file_operations = {"willRename": {"filters": RENAME_FILTERS}} if renames else {}
    capabilities = {
        "positionEncoding": encoding,
        "textDocumentSync": {"openClose": True, "change": 2, **sync, "save": True},
        "completionProvider": {"triggerCharacters": [":", " "]},
        "hoverProvider": True,
        "documentSymbolProvider": True,
        "codeActionProvider": {"codeActionKinds": ["quickfix", "source.fixAll.kinMemory"]},
        "codeLensProvider": {"resolveProvider": False},
        "documentLinkProvider": {"resolveProvider": False},
        "workspaceSymbolProvider": {"resolveProvider": False},
        "executeCommandProvider": {"commands": list(COMMANDS)},
        "workspace": {
            "workspaceFolders": {"supported": True, "changeNotifications": True},
            "fileOperations": file_operations,
        },
    }
    return {"capabilities": capabilities, "serverInfo": {"name": SERVER_NAME, "version": __version__}}


def is_server_answer(result: object) -> bool:
    """Whether `result` is an answer this code's server gives some client: exactly initialize_answer's
    keys, types and values, only what varies with the client (encoding, willSave flags, willRename) free.
    A remembered answer (handshake.py) is sent only then: a planted one can tell the editor nothing this
    server would not."""
    if not isinstance(result, dict) or set(result) != {"capabilities", "serverInfo"}:
        return False
    caps = result["capabilities"]
    encoding = caps.get("positionEncoding") if isinstance(caps, dict) else None
    sync = caps.get("textDocumentSync") if isinstance(caps, dict) else None
    workspace = caps.get("workspace") if isinstance(caps, dict) else None
    operations = workspace.get("fileOperations") if isinstance(workspace, dict) else None
    if not isinstance(encoding, str) or not isinstance(sync, dict) or not isinstance(operations, dict):
        return False
    said = {k: False for k in ("willSave", "willSaveWaitUntil") if k in sync}
    client = {  # the client that would be given this answer, if any
        "general": {"positionEncodings": [encoding]},
        "workspace": {"fileOperations": {"willRename": bool(operations)}},
        "textDocument": {"synchronization": said},
    }
    return _same(result, initialize_answer({"capabilities": client}))


def offers(params: object, encoding: object) -> bool:
    """Whether the client takes this position encoding (UTF-16 always: the protocol's default)."""
    if encoding == DEFAULT_ENCODING:
        return True
    caps = params.get("capabilities") if isinstance(params, dict) else None
    general = caps.get("general") if isinstance(caps, dict) else None
    offered = general.get("positionEncodings") if isinstance(general, dict) else None
    return isinstance(offered, list) and encoding in offered


def _same(a: object, b: object) -> bool:
    """Equal with the same JSON types throughout (Python's == takes 1 for true and 2.0 for 2)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _encoding(caps: dict) -> str | None:
    """The client's first position encoding pygls supports, else UTF-16 (as pygls chooses)."""
    general = caps.get("general")
    if general is None:
        return DEFAULT_ENCODING
    if not isinstance(general, dict):
        return None
    offered = general.get("positionEncodings")
    if offered is None:
        return DEFAULT_ENCODING
    if not isinstance(offered, list) or not all(isinstance(e, str) for e in offered):
        return None
    return next((e for e in offered if e in ENCODINGS), DEFAULT_ENCODING)


def _sync(caps: dict) -> dict[str, bool] | None:
    """willSave / willSaveWaitUntil: this server takes neither, and pygls says so (false) only to a
    client that said anything of them."""
    text_document = caps.get("textDocument")
    synchronization = text_document.get("synchronization") if isinstance(text_document, dict) else None
    if text_document is not None and not isinstance(text_document, dict):
        return None
    if synchronization is None:
        return {}
    if not isinstance(synchronization, dict):
        return None
    said = {k: synchronization.get(k) for k in ("willSave", "willSaveWaitUntil")}
    if any(v is not None and not isinstance(v, bool) for v in said.values()):
        return None
    return {k: False for k, v in said.items() if v is not None}


def _will_rename(caps: dict) -> bool | None:
    """Whether the client sends willRenameFiles; None for a shape not judged here."""
    workspace = caps.get("workspace")
    if workspace is None:
        return False
    if not isinstance(workspace, dict):
        return None
    operations = workspace.get("fileOperations")
    if operations is None:
        return False
    if not isinstance(operations, dict):
        return None
    value = operations.get("willRename")
    if value is None:
        return False
    return value if isinstance(value, bool) else None
