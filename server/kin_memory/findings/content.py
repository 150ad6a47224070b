"""KM600, KM602, KM603 and unreadable files (KM900): what the body holds."""

from __future__ import annotations

import re

from ..store.context import Context
from ..store.frontmatter import Span
from ..store.memory import BODY_CAP, Memory
from .model import Finding, line_span

SECRET_PATTERNS = (
    ("private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI-style API key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9]{20,}")),
    (
        "GitHub token",
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}|\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    (
        "credential assignment",
        re.compile(
            r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\b\s*[:=]\s*['\"]?(?=[A-Za-z0-9/+_.-]*\d)[A-Za-z0-9/+_.-]{16,}"
        ),
    ),
)
# Literal fragments every pattern needs: a cheap `in` test skips the regexes on almost every line.
TRIGGERS = (
    "-----BEGIN",
    "AKIA",
    "ASIA",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AIza",
)
WORD_TRIGGERS = ("key", "secret", "token", "passw")
MAX_SCAN_LINE = 20_000  # secrets live in short lines; a 100k-char line is scanned in its head only


def check(memory: Memory, ctx: Context) -> list[Finding]:
    if memory.read_error:
        return [Finding("KM900", line_span(memory.lines, 0), f"{memory.read_error}: this file is skipped")]
    findings: list[Finding] = []
    if memory.decode_error is not None or memory.has_nul:
        findings.append(_encoding(memory))
    if memory.is_index:
        return findings
    findings += _oversize(memory)
    findings += _secrets(memory)
    return findings


def _encoding(memory: Memory) -> Finding:
    for n, line in enumerate(memory.lines):
        col = line.find("\ufffd")
        if col >= 0:
            what = "invalid UTF-8" if memory.decode_error is not None else "a NUL byte"
            return Finding(
                "KM603",
                Span(n, col, n, col + 1),
                f"{what} here: the agent cannot read this file as text (bytes are shown as \ufffd)",
            )
    return Finding("KM603", line_span(memory.lines, 0), "not valid UTF-8 or contains NUL bytes")


def _oversize(memory: Memory) -> list[Finding]:
    if memory.size <= BODY_CAP:  # the body is a part of the file
        return []
    start = memory.body_line
    total = 0
    for n in range(start, len(memory.lines)):
        total += len(memory.lines[n].encode("utf-8", "surrogatepass")) + 1
        if total > BODY_CAP:
            return [
                Finding(
                    "KM600",
                    line_span(memory.lines, n),
                    f"body is over 64 KB ({memory.size // 1024} KB file): reads stop at 64 KB, the rest is never recalled",
                )
            ]
    return []


def _secrets(memory: Memory) -> list[Finding]:
    out: list[Finding] = []
    # Whole-text substring tests (C speed) rule out nearly every file before any per-line work.
    text = memory.text
    lower = text.lower()
    if not any(t in text for t in TRIGGERS) and not any(w in lower for w in WORD_TRIGGERS):
        return out
    for n, line in enumerate(memory.lines):
        if len(line) < 16:
            continue
        head = line[:MAX_SCAN_LINE]
        lower = head.lower()
        if not any(t in head for t in TRIGGERS) and not any(w in lower for w in WORD_TRIGGERS):
            continue
        for label, pattern in SECRET_PATTERNS:
            m = pattern.search(head)
            if m:
                out.append(
                    Finding(
                        "KM602",
                        Span(n, m.start(), n, m.end()),
                        f"looks like a secret ({label}): memories are inlined into prompts; move it out of the store",
                    )
                )
                break
        if len(out) >= 20:
            break
    return out
