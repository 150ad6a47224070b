from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kin_memory.tool.commands import ToolContext, run_tool
from kin_memory.tool.write_rules import apply

W = "/home/u/repo"


def test_no_frontmatter_prepends():
    assert apply("body\n", W) == f"---\ncategory: episodic\nworkspace: {W}\n---\nbody\n"
    assert apply("body\n", None) == "---\ncategory: episodic\n---\nbody\n"
    assert apply("", W) == f"---\ncategory: episodic\nworkspace: {W}\n---\n"


def test_bare_category_line_is_content():
    text = "category: preference\nbody\n"
    assert apply(text, W) == f"---\ncategory: episodic\nworkspace: {W}\n---\n" + text


def test_no_frontmatter_crlf():
    assert (
        apply("body\r\nmore\r\n", W)
        == f"---\r\ncategory: episodic\r\nworkspace: {W}\r\n---\r\nbody\r\nmore\r\n"
    )


@pytest.mark.parametrize("cat", ["project-fact", "episodic"])
def test_stamped_categories(cat):
    text = f"---\ntitle: x\ncategory: {cat}\ntags: [a, b]\n---\n# Body\n\ntext  \n"
    assert (
        apply(text, W)
        == f"---\ntitle: x\ncategory: {cat}\ntags: [a, b]\nworkspace: {W}\n---\n# Body\n\ntext  \n"
    )


def test_preference_and_session_unstamped():
    for cat in ("preference", "session"):
        text = f"---\ncategory: {cat}\n---\nbody"
        assert apply(text, W) == text


def test_explicit_workspace_kept_verbatim():
    for value in ("global", "my-label", "'/other/path'"):
        text = f"---\ncategory: project-fact\nworkspace: {value}\n---\nbody\n"
        assert apply(text, W) == text


def test_no_active_workspace_no_stamp():
    text = "---\ncategory: project-fact\n---\nbody\n"
    assert apply(text, None) == text


def test_unknown_category_rewritten_in_place():
    text = "---\nz: 1\ncategory: Fact  # comment\na: 2\n---\nbody\n"
    assert apply(text, W) == f"---\nz: 1\ncategory: episodic\na: 2\nworkspace: {W}\n---\nbody\n"


def test_quoted_valid_category_kept():
    text = '---\ncategory: "preference"\n---\nb'
    assert apply(text, W) == text


def test_missing_category_inserted_after_fence():
    text = "---\ntitle: t\nworkspace: global\n---\nbody"
    assert apply(text, W) == "---\ncategory: episodic\ntitle: t\nworkspace: global\n---\nbody"


def test_empty_frontmatter():
    assert apply("---\n---\nbody", W) == f"---\ncategory: episodic\nworkspace: {W}\n---\nbody"


def test_block_value_of_bad_category_replaced():
    text = "---\ncategory:\n  - a\n  - b\nother: 1\n---\nbody"
    out = apply(text, W)
    assert out == f"---\ncategory: episodic\nother: 1\nworkspace: {W}\n---\nbody"
    assert yaml.safe_load(out.split("---\n")[1])["category"] == "episodic"


def test_nested_keys_not_mistaken_for_top_level():
    text = "---\ncategory: preference\nmeta:\n  workspace: nested\n  category: nope\n---\nb"
    assert apply(text, W) == text


def test_crlf_frontmatter_preserved():
    text = "---\r\ncategory: bogus\r\ntitle: t\r\n---\r\nbody\r\nline\r\n"
    assert (
        apply(text, W)
        == f"---\r\ncategory: episodic\r\ntitle: t\r\nworkspace: {W}\r\n---\r\nbody\r\nline\r\n"
    )


def test_unclosed_fence_is_not_frontmatter():
    text = "---\ncategory: preference\nbody"
    assert apply(text, W) == f"---\ncategory: episodic\nworkspace: {W}\n---\n" + text


def test_workspace_with_yaml_special_chars_is_quoted():
    out = apply("body", "/home/u/a: b #c")
    assert yaml.safe_load(out.split("---\n")[1])["workspace"] == "/home/u/a: b #c"


def test_through_create_body_byte_for_byte(tmp_path):
    body = "# Título\r\n\r\n  indented\ttab \n\n\nend without newline"
    text = "---\r\nb: 2\r\na: [1, 2]\r\ncategory: project-fact\r\n---\r\n" + body
    res = run_tool(
        {"command": "create", "path": "/memories/x/y.md", "file_text": text},
        ToolContext(root=tmp_path, workspace=W),
    )
    assert not res.is_error
    out = (tmp_path / "x" / "y.md").read_bytes().decode()
    assert out == f"---\r\nb: 2\r\na: [1, 2]\r\ncategory: project-fact\r\nworkspace: {W}\r\n---\r\n" + body


def test_non_memory_files_verbatim(tmp_path):
    ctx = ToolContext(root=tmp_path, workspace=W)
    for path in ("/memories/notes.txt", "/memories/MEMORY.md"):
        assert not run_tool({"command": "create", "path": path, "file_text": "plain"}, ctx).is_error
        assert (tmp_path / path.rsplit("/", 1)[1]).read_text() == "plain"


@given(
    body=st.text(max_size=200),
    cat=st.sampled_from(["project-fact", "preference", "episodic", "session", "x", None]),
)
def test_property_body_and_keys_preserved(body, cat):
    fm = "---\nkeep: 1\n" + (f"category: {cat}\n" if cat else "") + "---\n"
    out = apply(fm + body, W)
    assert out.endswith("---\n" + body)
    head = out[: len(out) - len(body)]
    data = yaml.safe_load(head.split("---\n")[1])
    assert data["keep"] == 1
    assert data["category"] in ("project-fact", "preference", "episodic", "session")
    if data["category"] in ("project-fact", "episodic"):
        assert data["workspace"] == W
    else:
        assert "workspace" not in data
