"""Who wrote a version, in words a person recognises: every door (the command line, the editors' history
and review views) shows these, never the stored source names ("tool", "external")."""

from __future__ import annotations

SYNC_PREFIX = "sync:"
MAX_NAME = 60
_WORDS = {
    "agent": "by the agent",
    "edit": "by you in the editor",
    "tool": "by you, with a Kin Memory command",
    "external": "outside the editor",
    "proposal": "by a reviewed proposal",
    "sweep": "by the expiry sweep",
    "restore": "by a restore from history",
    "sync": "by sync from another machine",
    "sync-resolve": "by resolving a sync conflict",
    "sync-kept": "by sync, this machine's side of a conflict kept",
}


def written_by(source: str) -> str:
    """ "by the agent", "by sync from laptop", "outside the editor"… (a source this version does not
    know is shown as it is stored, after "by")."""
    if source.startswith(SYNC_PREFIX) and len(source) > len(SYNC_PREFIX):
        # the machine's name comes from a commit anyone with push access can write: shown as unverified
        return f"by sync from {_printable(source[len(SYNC_PREFIX) :])} (as named by the commit)"
    return _WORDS.get(source, f"by {_printable(source)}")


def _printable(name: str) -> str:
    """A machine's name comes from a synced remote: no control characters or line breaks, kept short."""
    clean = "".join(c if c.isprintable() else "?" for c in name)
    return clean if len(clean) <= MAX_NAME else clean[: MAX_NAME - 1] + "…"
