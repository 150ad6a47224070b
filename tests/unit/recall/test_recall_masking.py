"""Point 15 in recall: snippets and titles show a secret's kind, never the secret, including a secret
cut by the snippet's read window; the CLI's search and index-preview print them masked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kin_memory.recall.snippet import MAX_SNIPPET, snippet

ANTHROPIC = "sk-ant-api03-" + "Zq9_" * 8  # fabricated
OPENAI = "sk-proj-" + "Zq9-" * 8  # fabricated


def test_snippet_masks_a_secret_near_the_query() -> None:
    out = snippet(f"# T\n\nThe deploy key is {ANTHROPIC} for the zebracorn job.\n", "zebracorn")
    assert "sk-ant-…****" in out and "Zq9_" not in out


def test_snippet_masks_a_secret_cut_by_its_read_window() -> None:
    head = MAX_SNIPPET * 64  # the characters a snippet reads
    lead = "zebracorn key "
    cut_after = len("sk-ant-api03-Zq9_")  # the cut leaves too little of the key to be recognised
    filler = "word " * ((head - cut_after - len(lead)) // 5)
    body = filler.ljust(head - cut_after - len(lead)) + lead + ANTHROPIC + " and more words\n"
    assert body.index(ANTHROPIC) + cut_after == head  # the read window ends inside the key
    out = snippet(body, "zebracorn")
    assert "zebracorn key sk-ant-…****" in out and "Zq9_" not in out, out


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args, "--root", str(root), "--workspace", "none"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(root.parent)},
    )


def test_cli_search_and_index_preview_print_secrets_masked(store: Path) -> None:
    (store / "keys.md").write_text(
        f"---\ncategory: preference\n---\n# Keys {OPENAI}\n\nThe zebracorn job uses {ANTHROPIC}.\n"
    )
    (store / "MEMORY.md").write_text(f"- zebracorn key {ANTHROPIC}\n")
    for args in (("search", "zebracorn"), ("search", "zebracorn", "--json"), ("index-preview",)):
        out = _cli(store, *args)
        assert out.returncode == 0, out.stderr
        assert "Zq9" not in out.stdout and "sk-ant-…****" in out.stdout, out.stdout
    preview = json.loads(_cli(store, "index-preview", "--json").stdout)
    assert preview["text"] == (
        "# Memory\n- /memories/keys.md (preference) — Keys sk-proj-…****\n\n## MEMORY.md\n"
        "- zebracorn key sk-ant-…****\n"
    )


WORDS = ("gateway", "routes", "zebracorn", "key", "the", "deploy", "token", "x")
SECRETS = (ANTHROPIC, OPENAI, "ghp_" + "Zq98" * 9, "AKIA" + "ZQ98ZQ98ZQ98ZQ98", "password=" + "Zq98" * 5)


@given(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=3000),
    st.integers(min_value=0, max_value=3000),
    st.sampled_from(SECRETS),
    st.sampled_from(WORDS),
    st.sampled_from((40, 160)),
)
@settings(max_examples=150, deadline=None)
def test_snippet_never_shows_a_secret(words, at, secret, query, width) -> None:
    at = min(at, len(words))
    body = " ".join([*words[:at], secret, *words[at:]])
    out = snippet(body, query, width)
    assert "Zq98" not in out and "Zq9_" not in out and "Zq9-" not in out and "ZQ98" not in out, out
