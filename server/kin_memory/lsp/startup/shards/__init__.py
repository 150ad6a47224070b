"""Cold-start shards: the store is read and parsed by forked workers while the LSP stack imports.

Importing pygls/lsprotocol takes about a third of a second of pure CPU, and a big store takes seconds
to parse on one core. `kin-memory serve` therefore forks one worker per core *before* it imports the
LSP stack (no threads exist yet, so forking is safe). Each worker scans the store, keeps every Nth
file, reads and parses it, then waits for the session's check context (known only after `initialize`
and `workspace/configuration`), checks its files and sends back framed publishDiagnostics bytes, its
share of the prompt-block listing and the freshness key it saw per file.

The server uses the shards only when they were started for the root it ends up serving; otherwise,
or when a worker fails, it checks in-process as before. The workers hold no state the server needs
later: the server loads its own Store afterwards, off the critical path, and rechecks any file whose
freshness key moved in between (store/freshness.py).


The package, by role: `process` (the workers and their lifetime), `channel` (what travels between a
worker and the server), `check` (a worker's check), `outbox` (what it sends, in chunks), `snapshots` (the
segment snapshots and the recall comparison), `records` (what comes back about each file).
"""

from __future__ import annotations

from .channel import OnFrames, OnRecall, OnRecords, OnSummaries
from .check import _check
from .process import MAX_WORKERS, POSITION_ENCODINGS, Shards, same_check
from .records import JsonRecords, KnownFiles, PickledRecords, ShardResult
from .snapshots import RECALL_KEEP, RecallSaid

__all__ = [
    "MAX_WORKERS",
    "POSITION_ENCODINGS",
    "RECALL_KEEP",
    "JsonRecords",
    "KnownFiles",
    "OnFrames",
    "OnRecall",
    "OnSummaries",
    "OnRecords",
    "PickledRecords",
    "RecallSaid",
    "ShardResult",
    "Shards",
    "_check",
    "same_check",
]
