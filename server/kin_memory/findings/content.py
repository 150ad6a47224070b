"""KM600, KM602, KM603 and unreadable files (KM900): what the body holds."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from ..store.context import Context
from ..store.frontmatter import Span
from ..store.memory import BODY_CAP, Memory
from .edits import newline
from .model import Finding, Fix, TextEdit, line_span
from .suppress import silenced

# -- secrets (KM602) ------------------------------------------------------------------------------
# Each pattern may name two groups: `keep`, the vendor prefix that says what kind of secret it is and is
# not itself secret (shown when masking), and `secret`, the part to report and mask when the match
# includes context (`password = …`). Without `secret` the whole match is the secret.


@dataclass(frozen=True)
class SecretPattern:
    label: str
    source: str  # the regular expression, compiled when first needed (see regex)
    triggers: tuple[str, ...] = ()  # literal fragments, one of which any match contains
    words: tuple[str, ...] = ()  # lowercase fragments, for patterns matched case-insensitively

    @cached_property
    def regex(self) -> re.Pattern[str]:
        # Compiled on first use: nearly every text is ruled out by the literals first, and compiling the
        # patterns cost 2 ms of every `kin-memory check`'s start.
        return re.compile(self.source)


_B64URL = "[A-Za-z0-9_-]"
PRIVATE_KEY_LABEL = "private key"
_PEM_HEAD = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"

# In priority order: where two matches overlap, the earlier pattern names the secret (a GitHub token in
# `token = ghp_…` is a GitHub token, not a generic assignment).
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(PRIVATE_KEY_LABEL, _PEM_HEAD, ("-----BEGIN",)),
    SecretPattern("Anthropic API key", rf"\b(?P<keep>sk-ant-){_B64URL}{{20,}}", ("sk-ant-",)),
    SecretPattern(
        "OpenAI API key",
        # legacy keys are 48 letters and digits; project, service-account and admin keys are base64url
        rf"\b(?P<keep>sk-(?!ant-)(?:proj-|svcacct-|admin-)?)(?={_B64URL}*\d)[A-Za-z0-9]{_B64URL}{{19,}}",
        ("sk-",),
    ),
    SecretPattern(
        "AWS access key id",
        r"\b(?P<keep>AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
    ),
    SecretPattern(
        "AWS secret access key",
        # 40 base64 characters are a secret key only next to its name: alone they are any hash
        r"(?i)\b(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)\b[\"']?\s*[:=]\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        words=("secret",),
    ),
    SecretPattern(
        "GitHub token",
        r"\b(?P<keep>gh[pousr]_)[A-Za-z0-9]{36,}|\b(?P<pat>github_pat_)[A-Za-z0-9_]{22,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    SecretPattern("GitLab token", rf"\b(?P<keep>glpat-){_B64URL}{{20,}}", ("glpat-",)),
    SecretPattern("Slack token", r"\b(?P<keep>xox[baprs]-)(?=[A-Za-z0-9-]*\d)[A-Za-z0-9-]{10,}", ("xox",)),
    SecretPattern(
        "Stripe secret key",
        r"\b(?P<keep>(?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{16,}",
        ("k_live_", "k_test_"),
    ),
    SecretPattern("Google API key", rf"\b(?P<keep>AIza){_B64URL}{{35}}(?!{_B64URL})", ("AIza",)),
    SecretPattern(
        "JSON web token",
        rf"\b(?P<keep>eyJ){_B64URL}{{5,}}\.eyJ{_B64URL}{{5,}}\.{_B64URL}{{10,}}",
        ("eyJ",),
    ),
    SecretPattern(
        "credential assignment",
        r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\b\s*[:=]\s*['\"]?"
        r"(?P<secret>(?=[A-Za-z0-9/+_.-]*\d)[A-Za-z0-9/+_.-]{16,})",
        words=("key", "secret", "token", "passw"),
    ),
)
TRIGGERS = tuple(t for p in SECRET_PATTERNS for t in p.triggers)
WORD_TRIGGERS = tuple(dict.fromkeys(w for p in SECRET_PATTERNS for w in p.words))
MAX_SCAN_LINE = 20_000  # secrets live in short lines; a 100k-char line is scanned in its head only
MAX_SECRETS = 20  # findings per file: past that the file is plainly a credentials dump
MASK = "****"
_PEM_BLOCK = re.compile(rf"({_PEM_HEAD})(.*?)(?={_PEM_END}|\Z)", re.S)
_NOT_SPACE = re.compile(r"\S+")


@dataclass(frozen=True)
class SecretMatch:
    start: int
    end: int
    label: str
    keep: str  # the non-secret vendor prefix, shown when masked


def gated_literals(
    literals: Iterable[str],
) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]:
    """The literals grouped by a *gate*: a character of theirs that prose seldom holds (a capital, a
    digit or `_`), so a text without it is ruled out for the whole group by one `in` (memchr: a few
    nanoseconds for a whole memory, where every search for a short literal steps through the text).
    ((gate, its literals), …) and the literals without such a character."""
    gated: dict[str, list[str]] = {}
    plain: list[str] = []
    unique = list(dict.fromkeys(literals))
    for literal in unique:
        if any(other != literal and other in literal for other in unique):
            continue  # found wherever it is by the shorter literal it holds (`sk-ant-` by `sk-`)
        gate = next(
            (ch for ch in literal if ch.isascii() and (ch.isupper() or ch.isdigit() or ch == "_")), ""
        )
        if gate:
            gated.setdefault(gate, []).append(literal)
        else:
            plain.append(literal)
    # Longer literals first within each list: a longer needle is searched in fewer steps.
    return (
        tuple((gate, tuple(sorted(group, key=len, reverse=True))) for gate, group in gated.items()),
        tuple(sorted(plain, key=len, reverse=True)),
    )


def holds_literal(text: str, gated: tuple[tuple[str, tuple[str, ...]], ...], plain: tuple[str, ...]) -> bool:
    """Whether any of the literals `gated_literals` grouped occurs in the text."""
    for gate, group in gated:
        if gate in text:  # every literal of the group holds its gate: none can be there without it
            for literal in group:
                if literal in text:
                    return True
    for literal in plain:
        if literal in text:
            return True
    return False


_GATED_TRIGGERS, _PLAIN_TRIGGERS = gated_literals(TRIGGERS)


def _may_hold_secrets(text: str) -> bool:
    """Literal tests that rule out nearly every text before any secret pattern runs."""
    if holds_literal(text, _GATED_TRIGGERS, _PLAIN_TRIGGERS):
        return True
    lower = text.lower()
    for word in WORD_TRIGGERS:  # a loop, not any(): the generator cost more than the searches
        if word in lower:
            return True
    return False


def _candidates(pattern: SecretPattern, text: str, lower: str) -> list[SecretMatch]:
    if not (any(t in text for t in pattern.triggers) or any(w in lower for w in pattern.words)):
        return []
    out = []
    for m in pattern.regex.finditer(text):
        group = "secret" if m.groupdict().get("secret") is not None else 0
        keep = m.groupdict().get("keep") or m.groupdict().get("pat") or ""
        out.append(SecretMatch(m.start(group), m.end(group), pattern.label, keep))
    return out


def _start(m: SecretMatch) -> int:
    return m.start


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in the text, left to right, none overlapping another."""
    if not _may_hold_secrets(text):
        return []
    lower = text.lower()
    taken: list[SecretMatch] = []  # sorted by start, never overlapping
    for pattern in SECRET_PATTERNS:
        for c in _candidates(pattern, text, lower):
            i = bisect.bisect_left(taken, c.start, key=_start)
            if (i == 0 or taken[i - 1].end <= c.start) and (i == len(taken) or c.end <= taken[i].start):
                taken.insert(i, c)
    return taken


def _mask_pem_bodies(text: str) -> str:
    """A private key block keeps its BEGIN line and its line breaks; every word of its body is masked
    (to the END line, or to the end of the text when the block is cut)."""
    return _PEM_BLOCK.sub(lambda m: m.group(1) + _NOT_SPACE.sub(MASK, m.group(2)), text)


def mask_secrets(text: str) -> str:
    """The text with every secret the detector finds masked (`sk-ant-…****`): snippets, hovers and
    previews show what kind of secret is there, never the secret."""
    if not _may_hold_secrets(text):
        return text
    if "-----BEGIN" in text:
        text = _mask_pem_bodies(text)
    out: list[str] = []
    at = 0
    for m in find_secrets(text):
        if m.label == PRIVATE_KEY_LABEL:
            continue  # the BEGIN line says what it is; the body is already masked
        out.append(text[at : m.start])
        out.append(f"{m.keep}…{MASK}" if m.keep else MASK)
        at = m.end
    out.append(text[at:])
    return "".join(out)


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


def secret_lines(lines: Sequence[str]) -> Iterator[tuple[int, SecretMatch]]:
    """Every secret KM602 reports in these lines, as (line, match): what a `disable KM602` or a
    `disable-next-line KM602` comment silences is left out (the person marked it as no secret). The one
    reading for every door: the diagnostics (editors, `check`, the health view built on them) and the
    sync's warning about what went out."""
    found = silenced(lines) if any("kin-memory:" in line for line in lines) else None
    if found is not None and "KM602" in found.everywhere:
        return
    for n, line in enumerate(lines):
        if len(line) < 16 or (found is not None and found.covers("KM602", n)):
            continue
        for m in find_secrets(line[:MAX_SCAN_LINE]):
            yield n, m


def _secrets(memory: Memory) -> list[Finding]:
    out: list[Finding] = []
    if not _may_hold_secrets(memory.text):
        return out
    for n, m in secret_lines(memory.lines):
        out.append(
            Finding(
                "KM602",
                Span(n, m.start, n, m.end),
                f"looks like a secret ({m.label}): memories are inlined into prompts; move it out of the store",
                _secret_fixes(memory, n, m),
            )
        )
        if len(out) >= MAX_SECRETS:
            return out
    return out


# -- KM602's quick fixes ----------------------------------------------------------------------------
_PEM_END_LINE = re.compile(_PEM_END)


def _removed_lines(memory: Memory, n: int, match: SecretMatch) -> tuple[int, int]:
    """The lines [first, last] that hold the secret: its line, or a private key's whole block (to its END
    line, or to the end of its paragraph when it has none): removing only the BEGIN line would leave the
    key itself in the store, no longer flagged."""
    if match.label != PRIVATE_KEY_LABEL:
        return n, n
    lines = memory.lines
    for k in range(n, len(lines)):
        if _PEM_END_LINE.search(lines[k]):
            return n, k
        if k > n and not lines[k].strip():
            return n, k - 1
    return n, max(n, len(lines) - 1 - (lines[-1] == ""))


def _line_removal(memory: Memory, first: int, last: int) -> TextEdit:
    """Lines first..last gone with their line break. The last line of a file without a final break
    takes the break before it instead (a range past the file's end is not one every editor takes)."""
    lines = memory.lines
    if last + 1 < len(lines):
        return TextEdit(Span(first, 0, last + 1, 0), "")
    if first > 0:
        return TextEdit(Span(first - 1, len(lines[first - 1]), last, len(lines[last])), "")
    return TextEdit(Span(first, 0, last, len(lines[last])), "")


def _secret_fixes(memory: Memory, n: int, match: SecretMatch) -> tuple[Fix, ...]:
    first, last = _removed_lines(memory, n, match)
    title = (
        "Remove the line holding the secret"
        if first == last
        else f"Remove the private key (lines {first + 1}–{last + 1})"
    )
    fixes = [Fix(title, (_line_removal(memory, first, last),))]
    if n >= memory.body_line:
        # In the body only: in the frontmatter an HTML comment would be read as YAML.
        indent = memory.lines[n][: len(memory.lines[n]) - len(memory.lines[n].lstrip(" \t"))]
        marker = f"{indent}<!-- kin-memory: disable-next-line KM602 -->{newline(memory)}"
        fixes.append(
            Fix("Mark as not a secret (a comment above the line)", (TextEdit(Span(n, 0, n, 0), marker),))
        )
    return tuple(fixes)
