"""Findings about the store as a whole rather than one memory's text.

KM700/KM701 (the settings files) and KM900 (entries the scan could not use); KM601 and KM604 for the
whole store need the recall index and live with it (recall/store_findings.py). `kin-memory check` and the
language server both call these.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..store.frontmatter import Span
from ..store.scan import ScanProblem
from .model import Finding
from .settings_files import settings_findings as settings_findings  # re-exported
from .settings_files import settings_problem_finding as settings_problem_finding


def scan_findings(problems: Iterable[ScanProblem]) -> dict[str, list[Finding]]:
    """KM900 for each entry the scan skipped (a folder named x.md, a link out of the store, …)."""
    out: dict[str, list[Finding]] = {}
    for problem in problems:
        out.setdefault(problem.vpath, []).append(Finding("KM900", Span(0, 0, 0, 0), problem.reason))
    return out
