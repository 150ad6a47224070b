"""KM700/KM701: the findings of the settings files a context reads, apart from the store's other
store-level findings so that a check answered from its summary need not import those."""

from __future__ import annotations

from pathlib import Path

from ..store.settings import EffectiveSettings, SettingsProblem
from ..store.span import Span
from .model import Finding, Fix, TextEdit


def settings_problem_finding(problem: SettingsProblem) -> Finding:
    span = Span(problem.line, problem.col, problem.line, max(problem.end_col, problem.col))
    fixes: tuple[Fix, ...] = ()
    if problem.code == "KM700":
        remove = TextEdit(Span(problem.line, 0, problem.line + 1, 0), "")
        fixes = (Fix("Remove `memory_dir` from the project settings", (remove,), preferred=True),)
    return Finding(problem.code, span, problem.message, fixes)


def settings_findings(settings: EffectiveSettings) -> dict[Path, list[Finding]]:
    """Every settings file the context reads (global, then each project's), with its findings ([] = clean)."""
    return {f.path: [settings_problem_finding(p) for p in f.problems] for f in settings.files}
