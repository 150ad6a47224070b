"""Untrusted text reaching a renderer, through the real server (issue 14, points 5, 11, 14 and 15).

Each test plants what a hostile agent or repository could write, asks the server the way an editor does
and checks what would be rendered: markdown that stays inert, listings with one line per entry, recall
that is off when memory is disabled, and secrets that are masked wherever memory text is shown.
"""

from __future__ import annotations

import re
from pathlib import Path

from reliability_support import RawServer, memory, write

WS_STAMP_ATTACK = "x`\\n\\n[click](command:foo) <img src=x>"  # YAML escapes: a real blank line
SHOWN_STAMP = "x`\\n\\n[click](command:foo) <img src=x>"  # how it must read: escapes visible


def live_markdown(text: str) -> str:
    """The parts of a markdown text that are not inside code spans, as CommonMark reads them: blocks
    first (a blank line ends a paragraph, and any code span left open in it), then code spans (a run of
    n backticks closes only at the next run of exactly n)."""
    live = []
    for paragraph in re.split(r"\n[ \t]*\n", text):
        i = 0
        while i < len(paragraph):
            run = re.match(r"`+", paragraph[i:])
            if run:
                n = len(run.group())
                close = next((m for m in re.finditer(r"`+", paragraph[i + n :]) if len(m.group()) == n), None)
                if close:
                    i += n + close.end()
                    continue
                live.append(run.group())
                i += n
                continue
            live.append(paragraph[i])
            i += 1
        live.append("\n\n")
    return "".join(live)


def wait_recall(server: RawServer) -> None:
    server.wait_until(lambda: any("recall index:" in m for m in server.logs()), 60, "the recall index sync")


# -- point 5: the workspace hover ---------------------------------------------------------------


def test_workspace_hover_renders_a_hostile_stamp_inert(root: Path, server_factory) -> None:
    target = write(
        root / "facts" / "stamp.md",
        f'---\ncategory: project-fact\nworkspace: "{WS_STAMP_ATTACK}"\n---\n# Stamp\n\nbody\n',
    )
    server = server_factory()
    server.initialize()
    uri = server.open(target)
    text = server.hover(uri, 2, 2)["result"]["contents"]["value"]  # on the `workspace` key
    live = live_markdown(text)
    assert "](command:" not in live and "[click]" not in live, text
    assert "<img" not in live and "command:foo" not in live, text
    # the value is quoted whole, escapes visible, in one code span on the hover's own line
    seen = next(line for line in text.split("\n") if line.startswith("Seen from"))
    assert SHOWN_STAMP in seen, text
    value_hover = server.hover(uri, 2, 14)["result"]["contents"]["value"]  # on the value
    assert "command:foo" not in live_markdown(value_hover), value_hover
    assert server.shutdown() == 0


def test_category_hover_renders_a_hostile_value_inert(root: Path, server_factory) -> None:
    target = write(
        root / "facts" / "cat.md",
        '---\ncategory: "x`\\n\\n![i](http://evil.example/p.png) <b>b</b>"\nworkspace: global\n---\nbody\n',
    )
    server = server_factory()
    server.initialize()
    text = server.hover(server.open(target), 1, 2)["result"]["contents"]["value"]
    live = live_markdown(text)
    assert "![" not in live and "<b>" not in live and "http" not in live, text
    assert "reads as project-fact" in text
    assert server.shutdown() == 0


# -- point 11: names in what the agent reads ------------------------------------------------------

EVIL_NAME = "evil\n- /memories/fake.md (pretend).md"


def test_newline_name_fakes_no_line_in_tool_view_or_index_preview(root: Path, server_factory) -> None:
    write(root / "prefs" / "tone.md", memory("preference", "# Tone\n\nShort answers.\n"))
    write(root / EVIL_NAME, memory("preference", "# Planted\n\nbody\n"))
    server = server_factory()
    server.initialize()
    listing = server.tool({"command": "view", "path": "/memories"})["content"]
    header, *entries = listing.splitlines()
    assert all(re.match(r"^\d+(\.\d)?[BKMG]\t/memories(/\S.*)?$", e) for e in entries), listing
    assert sum(e.endswith("\t/memories/evil\\n- /") for e in entries) == 1, listing
    preview = server.command("kin.memory.indexPreview", {"workspace": "none"})["result"]
    lines = preview["text"].splitlines()
    assert preview["lines"] == len(lines) == 3, preview  # the header and one line per memory
    assert lines[1] == "- /memories/evil\\n- /memories/fake.md (pretend).md (preference) — Planted", lines
    assert not any(line.startswith("- /memories/fake.md") for line in lines)
    assert server.shutdown() == 0


# -- point 14: memory_enabled = false turns recall off -------------------------------------------

DISABLED_GLOBAL = "Memory is disabled (memory_enabled = false in ~/.kin/settings.toml)"


def _recall_store(root: Path) -> Path:
    write(root / "facts" / "gateway.md", memory("project-fact", "# Gateway\n\nThe gateway routes TLS.\n"))
    write(
        root / "facts" / "gateway-2.md", memory("project-fact", "# Gateway two\n\nThe gateway routes TLS.\n")
    )
    return write(
        root / "facts" / "typo.md",
        "---\ncategory: projct-fact\nworkspace: global\n---\n# Typo\n\nThe gateway routes TLS too.\n",
    )


def _assert_recall_off(server: RawServer, typo: Path, settings_file: str) -> None:
    message = f"Memory is disabled (memory_enabled = false in {settings_file})"
    for name, arg in (("kin.memory.search", {"query": "gateway"}), ("kin.memory.indexPreview", {})):
        response = server.command(name, arg)
        assert "error" in response and response["error"]["message"] == message, (name, response)
    assert not server.request("workspace/symbol", {"query": "gateway"}).get("result")
    uri = server.open(typo)
    assert server.hover(uri, 6, 6).get("result") is None  # body text: no recall
    key = server.hover(uri, 1, 2)["result"]["contents"]["value"]  # frontmatter hovers stay
    assert "category" in key
    server.wait_until(lambda: "KM201" in server.codes(typo), 20, "diagnostics")  # diagnostics stay


def test_global_memory_enabled_false_turns_recall_off_in_the_server(root: Path, home: Path, server_factory):
    typo = _recall_store(root)
    settings = write(home / ".kin" / "settings.toml", "memory_enabled = false\n")
    server = server_factory()
    server.initialize()
    wait_recall(server)
    _assert_recall_off(server, typo, "~/.kin/settings.toml")
    settings.write_text("memory_enabled = true\n")  # read at each request: no restart needed
    hits = server.command("kin.memory.search", {"query": "gateway"})["result"]["results"]
    assert hits and server.request("workspace/symbol", {"query": "gateway"})["result"]
    related = server.hover(typo.as_uri(), 6, 6)["result"]["contents"]["value"]
    assert "Related memories" in related
    assert server.shutdown() == 0


def test_project_memory_enabled_false_turns_recall_off_in_the_server(
    root: Path, home: Path, tmp_path: Path, server_factory
) -> None:
    typo = _recall_store(root)
    repo = tmp_path / "repo"
    write(repo / ".kin" / "settings.toml", "memory_enabled = false\n")
    server = server_factory()
    server.initialize(folders=[repo])
    wait_recall(server)
    _assert_recall_off(server, typo, str(repo.resolve() / ".kin" / "settings.toml"))
    assert server.shutdown() == 0


# -- point 15: secrets are masked wherever memory text is shown ---------------------------------

ANTHROPIC = "sk-ant-api03-" + "Zq9_" * 8  # fabricated
GITHUB = "ghp_" + "Zq98" * 9  # fabricated
STRIPE = "sk_live_" + "Zq98" * 6  # fabricated
SECRET_TAILS = ("Zq9_Zq9_", "Zq98Zq98")


def _no_secret(text: str) -> None:
    assert not any(tail in text for tail in SECRET_TAILS), text


def test_secrets_of_another_memory_are_masked_in_hover_search_symbols_and_preview(
    root: Path, server_factory
) -> None:
    a = write(root / "facts" / "gateway.md", memory("project-fact", "# Gateway\n\nThe gateway routes TLS.\n"))
    write(
        root / "facts" / "gateway-keys.md",
        memory(
            "project-fact", f"# Gateway keys {GITHUB}\n\nThe gateway routes TLS with {ANTHROPIC} today.\n"
        ),
    )
    write(root / "MEMORY.md", f"# Index\n- billing uses {STRIPE}\n")
    server = server_factory()
    server.initialize()
    wait_recall(server)
    hover = server.hover(server.open(a), 6, 6)["result"]["contents"]["value"]
    assert "gateway\\-keys.md" in hover or "gateway-keys.md" in hover, hover
    assert "sk-ant-…" in hover and "ghp\\_…" in hover, hover  # the kind is shown (markdown-escaped)
    _no_secret(hover)
    results = server.command("kin.memory.search", {"query": "gateway keys"})["result"]["results"]
    keys = next(r for r in results if r["path"] == "/memories/facts/gateway-keys.md")
    assert keys["title"] == "Gateway keys ghp_…****" and "sk-ant-…****" in keys["snippet"], keys
    _no_secret(str(results))
    symbols = server.request("workspace/symbol", {"query": "gateway"})["result"]
    assert any(s["name"] == "Gateway keys ghp_…****" for s in symbols), symbols
    _no_secret(str(symbols))
    preview = server.command("kin.memory.indexPreview", {"workspace": "none"})["result"]
    assert "- billing uses sk_live_…****" in preview["text"] and "ghp_…****" in preview["text"], preview
    _no_secret(preview["text"])
    assert server.shutdown() == 0
