"""Frontmatter parsing that keeps exact source ranges and never rewrites a byte.

The fence scan is done by hand (cheap, exact offsets); the YAML between the fences is *composed* with
libyaml into nodes, which carry marks for every key and value and never expand aliases (so a YAML bomb
costs nothing). Only scalars we need are read off the nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from .slotted import quick_init
from .span import Span as Span  # re-exported: most callers know it as the frontmatter's

_Loader: type[yaml.CSafeLoader] | type[yaml.SafeLoader]
try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader

FENCE = "---"
_BARE_KEY = re.compile(r"^[A-Za-z_][\w-]*:(\s|$)")
STR_TAG = "tag:yaml.org,2002:str"
MAX_FRONTMATTER_CHARS = 256 * 1024


@quick_init
@dataclass(frozen=True, slots=True)
class Entry:
    """One top-level key of the frontmatter mapping."""

    key: str
    key_span: Span
    value_span: Span
    value: object  # str for string scalars, else a tag-typed python value or a marker
    is_string: bool
    is_scalar: bool
    raw: str  # the value's source text (for scalars), quoting included


@quick_init
@dataclass(frozen=True, slots=True)
class Frontmatter:
    status: str  # "none", "bare", "unclosed", "yaml_error", "not_mapping", "ok"
    open_line: int = 0
    close_line: int = -1  # line of the closing fence
    entries: tuple[Entry, ...] = ()
    error: str = ""
    error_span: Span | None = None
    body_line: int = 0  # first line after the frontmatter

    def readable(self, key: str) -> Entry | None:
        """The entry for key when the frontmatter is valid, or what could still be read of it when its
        YAML does not parse (see frontmatter_salvage.py): the one reading of category and stamp."""
        return self.get(key) if self.status in ("ok", "yaml_error") else None

    def get(self, key: str) -> Entry | None:
        """The first entry for key (later duplicates are reported, the first wins like the agent reads)."""
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None

    @property
    def keys(self) -> list[str]:
        return [e.key for e in self.entries]


def split_lines(text: str) -> list[str]:
    """Lines without terminators, splitting on \\n, \\r\\n and lone \\r (as editors do)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _is_fence(line: str) -> bool:
    return line.rstrip() == FENCE


def _closing_fence(lines: list[str]) -> int:
    for n in range(1, len(lines)):
        line = lines[n]
        if line[:3] in ("---", "...") and line.rstrip() in ("---", "..."):
            return n
    return -1


def parse_frontmatter(text: str, lines: list[str] | None = None) -> Frontmatter:
    lines = split_lines(text) if lines is None else lines
    first = lines[0] if lines else ""
    offset = 1 if first.startswith("\ufeff") else 0
    if not _is_fence(first[offset:]):
        if _BARE_KEY.match(first[offset:]):
            return Frontmatter("bare")
        return Frontmatter("none")
    close = _closing_fence(lines)
    if close < 0:
        return Frontmatter("unclosed", error="the frontmatter's opening `---` has no closing fence")
    # Too large whichever way it would be read (the size of the text YAML would be given).
    if sum(map(len, lines[1:close])) + max(close - 2, 0) > MAX_FRONTMATTER_CHARS:
        span = Span(1, 0, close - 1, len(lines[close - 1]))
        return Frontmatter(
            "yaml_error",
            0,
            close,
            error="frontmatter is too large to parse",
            error_span=span,
            body_line=close + 1,
        )
    simple = _simple_entries(lines, close)
    if simple is not None:
        return Frontmatter("ok", 0, close, simple, body_line=close + 1)
    yaml_text = "\n".join(lines[1:close])
    try:
        node = yaml.compose(yaml_text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = 1 + (mark.line if mark else 0)
        line = min(line, close - 1) if close > 1 else 0
        col = mark.column if mark else 0
        width = len(lines[line]) if line < len(lines) else 0
        col = min(col, width)
        end = col + 1 if col < width else col
        # What can still be read is kept (a broken `workspace:` still names its repository), and the
        # error is a sentence over the value that breaks it, when one is found.
        salvaged, broken = salvage(lines, close)
        if broken is not None:
            error, span = broken_sentence(broken), broken.span
        else:
            error = problem_sentence((exc.problem or str(exc)).strip(), line, col)
            span = Span(line, col, line, end)
        return Frontmatter(
            "yaml_error", 0, close, salvaged, error=error, error_span=span, body_line=close + 1
        )
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        span = Span(0, 0, 0, len(first))
        return Frontmatter(
            "yaml_error",
            0,
            close,
            error="frontmatter YAML does not parse: "
            + (
                "it nests too deeply"
                if isinstance(exc, RecursionError)
                else "it holds a value YAML cannot read"
            ),
            error_span=span,
            body_line=close + 1,
        )
    if node is None:
        return Frontmatter("ok", 0, close, (), body_line=close + 1)
    if not isinstance(node, yaml.MappingNode):
        span = _span(node.start_mark, node.end_mark, lines, close)
        kind = "a list" if isinstance(node, yaml.SequenceNode) else "a scalar"
        return Frontmatter(
            "not_mapping",
            0,
            close,
            error=f"frontmatter is {kind}, not a mapping of keys",
            error_span=span,
            body_line=close + 1,
        )
    entries = tuple(_entry(k, v, lines, close) for k, v in node.value)
    return Frontmatter("ok", 0, close, entries, body_line=close + 1)


# `key: plain value` with nothing YAML could read differently: no quotes, flow or block indicators,
# anchors, tags, comments, tabs or `: ` inside the value. Such lines (nearly every real memory) are
# read without libyaml; anything else takes the full YAML path, which gives the same answer here.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][\w-]*):( +)([A-Za-z0-9/~_.][^\t#:'\"\[\]{},&*!|>%@`]*?) *")
# The tag YAML would give a plain scalar. Typed here because the PyYAML stubs leave resolve() unannotated.
_resolve_tag: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve
# PyYAML's implicit resolvers key on the first character: only these can read as non-strings.
_TYPED_START = frozenset("0123456789+-.~")
_TYPED_WORDS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL y Y n N".split()
)


# Two more forms a third of real memories use (`tags: [a, b]`, `category: 'fact'`): a flow list of plain
# words, and a quoted string of printable ASCII without escapes. A list's items are not kept (an Entry of
# a list holds its kind only), so they only need to be words YAML reads without question.
_WORD = r"[A-Za-z_][\w./-]*"
_LIST_OR_QUOTED_LINE = re.compile(
    rf"([A-Za-z_][\w-]*):( +)(\[ *(?:{_WORD}(?: *, *{_WORD})* *)?\]|'([ -&(-~]*)'|\"([ !#-\[\]-~]*)\") *"
)


def _list_or_quoted(line: str, n: int) -> Entry | None:
    m = _LIST_OR_QUOTED_LINE.fullmatch(line)
    if m is None:
        return None
    key, col, value = m.group(1), m.end(2), m.group(3)
    key_span, value_span = Span(n, 0, n, len(key)), Span(n, col, n, col + len(value))
    if value[0] == "[":
        return Entry(key, key_span, value_span, "list", False, False, "")
    inner = m.group(4) if value[0] == "'" else m.group(5)
    return Entry(key, key_span, value_span, inner, True, True, value)


def _simple_entries(lines: list[str], close: int) -> tuple[Entry, ...] | None:
    entries = []
    for n in range(1, close):
        line = lines[n]
        m = _SIMPLE_LINE.fullmatch(line)
        if m is None:
            other = _list_or_quoted(line, n)
            if other is None:
                return None
            entries.append(other)
            continue
        value = m.group(3)
        if (value[0] in _TYPED_START or value in _TYPED_WORDS) and _resolve_tag(
            yaml.ScalarNode, value, (True, False)
        ) != STR_TAG:
            return None  # a number, bool, null or date: let YAML construct it
        key = m.group(1)
        col = m.end(2)
        entries.append(
            Entry(key, Span(n, 0, n, len(key)), Span(n, col, n, col + len(value)), value, True, True, value)
        )
    return tuple(entries) if entries else None


def _span(start: yaml.Mark, end: yaml.Mark, lines: list[str], close: int) -> Span:
    sl, el = 1 + start.line, 1 + end.line
    sc, ec = start.column, end.column
    # libyaml ends block values at the start of the next line: pull the end back to the text.
    if el > sl and ec == 0:
        el -= 1
        ec = len(lines[el]) if el < len(lines) else 0
    el = min(el, max(close - 1, sl))
    return Span(sl, sc, el, ec)


def _entry(knode: yaml.Node, vnode: yaml.Node, lines: list[str], close: int) -> Entry:
    key = knode.value if isinstance(knode, yaml.ScalarNode) else "<complex key>"
    key_span = _span(knode.start_mark, knode.end_mark, lines, close)
    value_span = _span(vnode.start_mark, vnode.end_mark, lines, close)
    if isinstance(vnode, yaml.ScalarNode):
        is_string = vnode.tag == STR_TAG
        value: object = vnode.value if is_string else _scalar(vnode)
        if value_span.line == value_span.end_line and value_span.line < len(lines):
            raw = lines[value_span.line][value_span.col : value_span.end_col]
        else:
            raw = vnode.value
        return Entry(str(key), key_span, value_span, value, is_string, True, raw)
    kind = "list" if isinstance(vnode, yaml.SequenceNode) else "mapping"
    return Entry(str(key), key_span, value_span, kind, False, False, "")


def _scalar(node: yaml.ScalarNode) -> object:
    """Construct a non-string scalar (int, bool, null, float, timestamp) safely."""
    try:
        loader = _Loader("")
        try:
            return loader.construct_object(node, deep=False)
        finally:
            loader.dispose()
    except Exception:  # noqa: BLE001 - any odd scalar reads as its text
        return node.value


# -- what can still be read when YAML refuses ---------------------------------------------------------
# Reading what can still be read of a frontmatter YAML refuses, and saying in a sentence why it refuses.
#
# A memory whose `workspace: [/home/me/src/webapp` lost its closing bracket is not "global (no stamp)": its
# other lines are plain `key: value` pairs and the broken value still names a repository. Line by line, the
# forms the fast path knows are read as it reads them, and a value whose `[` or quote is never closed is
# read as what it holds (one item of an unclosed list is that item). The first such value is the error: its
# whole value is the span, the sentence names the key, and the fix is obvious (close it, or drop a stray
# `[`). Anything else keeps YAML's position with a sentence for the problems people make.

_UNCLOSED_LIST = re.compile(r"([A-Za-z_][\w-]*):( +)(\[[^\]]*)")
_UNCLOSED_QUOTE = re.compile(r"([A-Za-z_][\w-]*):( +)((['\"])(.*))")


@dataclass(frozen=True)
class Broken:
    """The first value that breaks the YAML: where it is and what closes it."""

    key: str
    span: Span  # the whole value
    opener: str  # "[", "'" or '"'
    items: tuple[str, ...]  # what an unclosed list holds (one for a single path)


def salvage(lines: list[str], close: int) -> tuple[tuple[Entry, ...], Broken | None]:
    entries: list[Entry] = []
    broken: Broken | None = None
    for n in range(1, close):
        line = lines[n].rstrip()
        m = _SIMPLE_LINE.fullmatch(line)
        if m is not None:
            key, col, value = m.group(1), m.end(2), m.group(3)
            entries.append(
                Entry(
                    key, Span(n, 0, n, len(key)), Span(n, col, n, col + len(value)), value, True, True, value
                )
            )
            continue
        other = _list_or_quoted(line, n)
        if other is not None:
            entries.append(other)
            continue
        found = _unclosed(line, n)
        if found is None:
            continue
        entry, why = found
        entries.append(entry)
        broken = broken or why
    return tuple(entries), broken


def _unclosed(line: str, n: int) -> tuple[Entry, Broken] | None:
    m = _UNCLOSED_LIST.fullmatch(line)
    if m is not None:
        key, col, value = m.group(1), m.end(2), m.group(3)
        items = tuple(i.strip().strip("'\"").strip() for i in value[1:].split(","))
        items = tuple(i for i in items if i)
        span = Span(n, col, n, col + len(value))
        read: object = items[0] if len(items) == 1 else "list"
        entry = Entry(key, Span(n, 0, n, len(key)), span, read, len(items) == 1, len(items) == 1, value)
        return entry, Broken(key, span, "[", items)
    m = _UNCLOSED_QUOTE.fullmatch(line)
    if m is not None and m.group(4) not in m.group(5):
        key, col, value, quote, inner = m.group(1), m.end(2), m.group(3), m.group(4), m.group(5)
        span = Span(n, col, n, col + len(value))
        entry = Entry(key, Span(n, 0, n, len(key)), span, inner.rstrip(), True, True, value)
        return entry, Broken(key, span, quote, (inner.rstrip(),))
    return None


def broken_sentence(broken: Broken) -> str:
    what = "`[`" if broken.opener == "[" else "quote"
    return (
        f"frontmatter YAML does not parse: the {what} that opens the value of `{broken.key}` is never closed"
    )


# What YAML says of the mistakes people make, in a sentence each (by the start of its message).
_PROBLEMS = (
    (
        "mapping values are not allowed",
        "a value holds `: `, which YAML reads as another key: put the value in quotes",
    ),
    ("found character '\\t'", "a tab character: YAML indents with spaces only"),
    ("could not find expected ':'", "a line is not a `key: value` pair"),
    ("found undefined alias", "a value starts with `*`: put it in quotes"),
    ("found unexpected end of stream", "a quote or bracket is never closed"),
    ("did not find expected ',' or ']'", "a `[` is never closed"),
    ("did not find expected ',' or '}'", "a `{` is never closed"),
)


def problem_sentence(problem: str, line: int, col: int) -> str:
    """YAML's problem as a sentence a person recognises (its position when no sentence fits)."""
    for start, sentence in _PROBLEMS:
        if problem.startswith(start):
            return f"frontmatter YAML does not parse: {sentence}"
    return f"frontmatter YAML does not parse: line {line + 1}, column {col + 1} cannot be read as YAML"


_STAMP_LINE = re.compile(r"^workspace[ \t]*:[ \t]*(.*?)[ \t]*$")
SCAN_LINES = 100  # of a broken frontmatter, the most lines looked at for a stamp


def scanned_stamp(lines: list[str] | tuple[str, ...], fm: Frontmatter) -> str | None:
    """The `workspace` stamp of a frontmatter YAML cannot read (bare keys, no closing fence, a parse
    error or not a mapping), found by a tolerant line scan: the first top-level `workspace:` line among
    the frontmatter's lines (the bare key lines, or up to the closing fence, at most SCAN_LINES), its
    value unquoted. So a memory another repository stamped stays that repository's when its YAML breaks
    elsewhere. None when no such line holds a value."""
    if fm.status in ("ok", "none"):
        return None
    if fm.status == "bare":
        start, end = 0, len(lines)
    else:
        close = _closing_fence(list(lines[: SCAN_LINES + 1]))
        start, end = 1, close if close > 0 else len(lines)
    for line in lines[start : min(end, start + SCAN_LINES)]:
        if fm.status == "bare" and not _BARE_KEY.match(line):
            break  # the bare key block ends at the first line that is not a key
        m = _STAMP_LINE.match(line)
        if m is None:
            continue
        value = m.group(1)
        if " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        return value or None
    return None


def workspace_stamp(lines: list[str] | tuple[str, ...], fm: Frontmatter) -> object:
    """The one reading of a memory's `workspace` stamp, for every door (the store, the tool's visibility,
    the editors): the entry when the frontmatter parses; what can still be read of it when YAML refuses
    (an unclosed `[` or quote still names its repository); else, for a frontmatter YAML cannot read at
    all (bare keys, no closing fence, not a mapping), its first `workspace:` line. None: no stamp."""
    entry = fm.readable("workspace")
    if entry is not None:
        if entry.is_scalar and not entry.is_string and entry.value is None:
            return None  # `workspace:` with no value reads as no stamp
        return entry.value
    if fm.status in ("ok", "none"):
        return None
    return scanned_stamp(lines, fm)
