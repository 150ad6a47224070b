"""The commands of each group, known without importing the group (see LazyCommands). A test checks
that each group answers exactly these, and that together they are every command of the protocol."""

from __future__ import annotations

STORE = ("kin.memory.list", "kin.memory.markReviewed", "kin.memory.info")
RECALL = ("kin.memory.search", "kin.memory.indexPreview", "kin.memory.reindex")
TOOL = ("kin.memory.tool",)
SWEEP = ("kin.memory.sweep",)
REFLECT = ("kin.memory.reflect",)
SESSIONS = ("kin.memory.latestSession",)
PASSES = ("kin.memory.init", "kin.memory.consolidationCandidates", "kin.memory.consolidate")
PROPOSALS = ("kin.memory.applyProposal", "kin.memory.discardProposal", "kin.memory.listProposals")
HISTORY = (
    "kin.memory.history",
    "kin.memory.version",
    "kin.memory.restore",
    "kin.memory.changes",
    "kin.memory.acceptChanges",
    "kin.memory.revertChanges",
)
BULK = ("kin.memory.fixAll", "kin.memory.restamp")
HEALTH = ("kin.memory.stats", "kin.memory.setMemoryEnabled")
SYNC = ("kin.memory.sync", "kin.memory.resolveConflict", "kin.memory.conflictVersions")
