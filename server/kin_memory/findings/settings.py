"""KM700/KM701: problems in the kin settings files, as findings on those files."""

from __future__ import annotations

from ..store.frontmatter import Span
from ..store.settings import SettingsProblem
from .model import Finding, Fix, TextEdit


def from_problem(problem: SettingsProblem) -> Finding:
    span = Span(problem.line, problem.col, problem.line, max(problem.end_col, problem.col))
    fixes: tuple[Fix, ...] = ()
    if problem.code == "KM700":
        fixes = (
            Fix(
                "Remove `memory_dir` from the project settings",
                (TextEdit(Span(problem.line, 0, problem.line + 1, 0), ""),),
                preferred=True,
            ),
        )
    return Finding(problem.code, span, problem.message, fixes)
