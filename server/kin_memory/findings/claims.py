"""Claims: the checkable values a memory states, each with the subject it is about.

A claim is (attribute, subject, value) read from one clause of a memory's body:

- attribute: what kind of value it is, `port`, `host`, `version`, `path`, `url`, `count:<noun>` (a
  number of something: "8 workers" → `count:worker`) or `rule:<verb>:<object>` ("always squash commits"
  → `rule:squash:commit`, the value is the polarity: `always` or `never`);
- subject: the content words of the clause (lower case, plural folded, a few abbreviations expanded),
  without the value itself, stop words and the words that only name the attribute ("port", "listens",
  "version", "service"…): "The billing database listens on port 5432" → {billing, database}. A clause
  that leaves no word (`Port: 6380.` under `# Redis`) takes the memory's title words instead;
- value: normalised for comparison (a port as a number, a host in lower case, a path without its
  trailing slash).

A clause naming two different values of one attribute ("upgraded Python from 3.10 to 3.11") or telling
history ("used to", "previously", "migrated") states no current value: it gives no claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .choices import ROLE_WORDS, named_versions, tools

_URL = re.compile(r"https?://[^\s)>\]\"'`]+", re.I)
_PATH = re.compile(r"(?<![\w:/.~-])(~?/[\w.@+-]+(?:/[\w.@+-]+)+/?)")
_HOST_PORT = re.compile(r"\b([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):(\d{2,5})\b", re.I)
_PORT = re.compile(
    r"\bport(?:\s+number)?\s*(?:is|=|:|of)?\s*(\d{2,5})\b"
    r"|\b(?:listens|listening|runs|running|served|serves|bound|binds|exposed|answers)\s+(?:on|at)\s+(\d{2,5})\b"
    r"|\b(\d{2,5})\s+is\s+(?:the|its|our|their)\s+port\b",
    re.I,
)
_HOST = re.compile(
    r"\b(?:host(?:name)?|server)\s*(?:is|=|:)?\s*([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+)\b"
    r"|\b(?:runs|running|lives|deployed|hosted|reachable|relayed|goes|is|through|via)\s+(?:on|at|through|via)?\s*"
    r"(?:host\s+|the\s+[a-z]+\s+at\s+)?([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+)\b"
    r"|^\s*([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+)\s+(?:hosts|serves|runs)\b",
    re.I,
)
# A dotted name that is a host, not a file ("settings.toml", "index.js").
_DOTTED = re.compile(r"\b[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+\b", re.I)
FILE_ENDINGS = frozenset(
    "md txt toml json yaml yml ini cfg conf py js ts tsx jsx rs go java rb php sh lock log csv html css xml "
    "env sql lua vim zip gz tar png jpg svg pdf".split()
)
_IP = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*)(?![\w.]*\w)")
_COUNT = re.compile(r"(?<![\w.$:/-])(\d+)\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?", re.I)
_RULE = re.compile(
    r"\b(always|never|do\s+not|don't|must\s+not|mustn't|must|should\s+not|shouldn't|avoid)\s+"
    r"([a-z][\w-]*)((?:\s+[a-z][\w-]*){0,3})",
    re.I,
)
_IMPERATIVE_USE = re.compile(r"^\s*(use|prefer)\s+([a-z][\w-]*)", re.I)
_DIGIT = re.compile(r"\d")
_HOST_HINT = re.compile(
    r"host|server|runs|running|lives|deployed|reachable|relay|goes|through|via|\bis\b", re.I
)
_RULE_HINT = re.compile(r"always|never|not|n't|must|avoid|^\s*(?:use|prefer)\b", re.I)
_WORD = re.compile(r"[a-z][a-z0-9+#-]*", re.I)
_CLAUSE = re.compile(r"(?<=[.!?;])\s+|\n+")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_HISTORY = re.compile(
    r"\b(used to|previously|formerly|no longer|migrated|upgraded|downgraded|moved from|was changed|until)\b",
    re.I,
)

NEGATIVE = ("never", "do not", "don't", "must not", "mustn't", "should not", "shouldn't", "avoid")
STOP = frozenset(
    "a an the and or but of to in on at by for with from into onto is are was were be been being it its "
    "this that these those we our us you your they their there here as so if then than when while per "
    "via also just only all any each every some no not do does did has have had can could should would "
    "will shall may might must need needs needed about after before under over up down out new one where what "
    "which through".split()
)
# Words that name an attribute or a way of stating it, not what the value belongs to (folded: "goes" is
# "goe"; "go" itself names the language).
GENERIC = frozenset(
    "port host hostname server service version url address path file folder directory location lives live "
    "located listen listens listening run runs running serve serves served bound bind binds exposed "
    "write writes written use uses used using require requires required pinned pin set build builds built "
    "project repo repository environment env value default configured install installed setup happen "
    "happens keep keeps kept v number count total is at reachable answer answers goe outgoing minimum least "
    "need".split()
)
SYNONYMS = {
    "db": "database", "repo": "repository", "k8s": "kubernetes", "postgres": "postgresql", "pg": "postgresql",
    "configuration": "config", "prod": "production", "env": "environment", "js": "javascript",
    "approvals": "approval", "smtp": "mail", "relayed": "relay",
}  # fmt: skip
# Words after a number that are not what is counted ("4 parallel jobs": jobs).
_COUNT_SKIP = frozenset("parallel concurrent more extra separate active different total maximum max min "
                        "minimum required simultaneous".split())  # fmt: skip
_NOT_COUNTED = frozenset("am pm a an the of to and or percent x".split())
POLARITY = frozenset("alway never avoid don mustn shouldn".split())  # as content_words folds them
RULE_OBJECT_SKIP = STOP | frozenset("always never".split())


@dataclass(frozen=True)
class Claim:
    attribute: str  # port | host | version | path | url | count:<noun> | rule:<verb>:<object>
    subject: frozenset[str]
    value: str  # normalised
    shown: str  # as written, for a message
    line: int  # the body line the clause starts on (0-based, within the text given)
    where: frozenset[str] = frozenset()  # the hosts the clause names, by their first label ("db-staging")


def fold(word: str) -> str:
    """One form per word: lower case, abbreviations expanded, plural folded ("databases" → "database")."""
    w = word.lower().strip("-")
    w = SYNONYMS.get(w, w)
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("ses", "xes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    return SYNONYMS.get(w, w)


def content_words(text: str) -> frozenset[str]:
    return frozenset(
        f for f in (fold(w) for w in _WORD.findall(text)) if f not in STOP and f not in GENERIC and len(f) > 1
    )


def _clauses(body: str) -> list[tuple[int, str]]:
    """(line, clause) for every clause; headings are left out (they give the title)."""
    out: list[tuple[int, str]] = []
    for n, line in enumerate(body.splitlines()):
        if _HEADING.match(line) or line.strip().startswith(("---", "```")):
            continue
        for part in _CLAUSE.split(line):
            if part.strip():
                out.append((n, part.strip().lstrip("-*> ").strip()))
    return out


def title_words(body: str) -> frozenset[str]:
    for line in body.splitlines():
        m = _HEADING.match(line)
        if m:
            return content_words(m.group(1))
    return frozenset()


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the spans blanked (same length: later offsets stay valid)."""
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _values(clause: str) -> tuple[list[tuple[str, str, str]], list[tuple[int, int]]]:
    """(attribute, value, shown) for every value of the clause, and the spans they take."""
    found: list[tuple[str, str, str]] = []
    spans: list[tuple[int, int]] = []
    rest = clause

    def take(attribute: str, value: str, shown: str, span: tuple[int, int]) -> None:
        found.append((attribute, value, shown))
        spans.append(span)

    # Cheap tests first: most clauses hold no digit, no slash and no dotted name, so no value at all.
    digits = _DIGIT.search(clause) is not None
    if "://" in clause:
        for m in _URL.finditer(rest):
            url = m.group(0).rstrip(".,;:!?")
            take("url", _norm_url(url), url, m.span())
        rest = _mask(rest, spans)
    if "/" in rest:
        for m in _PATH.finditer(rest):
            path = m.group(1).rstrip(".,;:")
            if not path.startswith("/memories/"):
                take("path", path.rstrip("/"), path, m.span(1))
        rest = _mask(rest, spans)
    if digits:
        for m in _HOST_PORT.finditer(rest):
            take("port", str(int(m.group(2))), m.group(2), m.span(2))
            take("host", m.group(1).lower(), m.group(1), m.span(1))
        rest = _mask(rest, spans)
    if "." in rest.rstrip(". ") and _HOST_HINT.search(rest):
        for m in _HOST.finditer(rest):
            g = next(i for i in (1, 2, 3) if m.group(i))
            if not re.fullmatch(r"[\d.]+", m.group(g)) and is_host(m.group(g)):
                take("host", m.group(g).lower().rstrip("."), m.group(g), m.span(g))
        rest = _mask(rest, spans)
    if not digits:
        return found, spans
    for m in _PORT.finditer(rest):
        g = next(i for i in (1, 2, 3) if m.group(i))
        take("port", str(int(m.group(g))), m.group(g), m.span())
    rest = _mask(rest, spans)
    for attribute, value, shown, span in named_versions(rest):
        take(attribute, value, shown, span)
    rest = _mask(rest, spans)
    for m in _IP.finditer(rest):
        take("host", m.group(1), m.group(1), m.span(1))
    rest = _mask(rest, spans)
    for m in _VERSION.finditer(rest):
        take("version", m.group(1), m.group(0), m.span())
    rest = _mask(rest, spans)
    for m in _COUNT.finditer(rest):
        noun = m.group(2)
        if fold(noun) in _COUNT_SKIP and m.group(3):
            noun = m.group(3)
        if noun.lower() in _NOT_COUNTED or fold(noun) in STOP:
            continue
        take(f"count:{fold(noun)}", str(int(m.group(1))), f"{m.group(1)} {noun}", m.span())
    return found, spans


def _rules(clause: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    if not _RULE_HINT.search(clause):
        return out
    for m in _RULE.finditer(clause):
        polarity = "never" if " ".join(m.group(1).lower().split()) in NEGATIVE else "always"
        verb = fold(m.group(2))
        obj = next((fold(w) for w in m.group(3).split() if fold(w) not in RULE_OBJECT_SKIP), "")
        out.append((f"rule:{verb}:{obj}", polarity, f"{m.group(1).lower()} {m.group(2)}{m.group(3)}".strip()))
    use = _IMPERATIVE_USE.match(clause)
    if use and not out:
        rest = clause[use.end(1) :].split()
        obj = next((fold(w) for w in rest if fold(w) not in RULE_OBJECT_SKIP), "")
        out.append(
            (
                f"rule:{fold(use.group(1))}:{obj}",
                "always",
                f"{use.group(1)} {rest[0] if rest else ''}".strip(),
            )
        )
    return out


def claims(body: str) -> list[Claim]:
    """Every claim of a memory body (frontmatter already removed), in order."""
    title = title_words(body)
    out: list[Claim] = []
    for line, clause in _clauses(body):
        if _HISTORY.search(clause):
            continue
        values, spans = _values(clause)
        rules = _rules(clause)
        chosen = tools(clause)
        if not values and not rules and not chosen:
            continue
        distinct: dict[str, set[str]] = {}
        for attribute, value, _ in values:
            distinct.setdefault(attribute, set()).add(value)
        where = hosts_in(
            _mask(clause, [s for s, (a, _, _) in zip(spans, values, strict=True) if a in ("url", "path")])
        )
        words = content_words(_mask(clause, spans + _host_spans(clause)))
        subject = words or title
        for attribute, value, shown in values:
            if len(distinct[attribute]) > 1:
                continue  # two values of one thing in one clause: a change or a list, not a statement
            out.append(Claim(attribute, subject, value, shown, line, where))
        for attribute, value, shown, span in chosen:
            own = content_words(_mask(clause, [span, *_host_spans(clause)])) - ROLE_WORDS
            out.append(Claim(attribute, own, value, shown, line, where))
        for attribute, value, shown in rules:
            qualifier = words - set(attribute.split(":")[1:]) - POLARITY  # "on release branches" of a rule
            out.append(Claim(attribute, qualifier, value, shown, line, where))
    return out


def is_host(name: str) -> bool:
    return name.rsplit(".", 1)[-1].lower() not in FILE_ENDINGS


def _host_spans(clause: str) -> list[tuple[int, int]]:
    return [m.span() for m in _DOTTED.finditer(clause) if is_host(m.group(0))]


def hosts_in(clause: str) -> frozenset[str]:
    """The first label of every host the clause names: where the subject is, not what it is."""
    return frozenset(
        m.group(0).split(".")[0].lower() for m in _DOTTED.finditer(clause) if is_host(m.group(0))
    )


def _norm_url(url: str) -> str:
    m = re.match(r"(https?)://([^/]+)(.*)$", url, re.I)
    if not m:
        return url
    return f"{m.group(1).lower()}://{m.group(2).lower()}{m.group(3).rstrip('/')}"
