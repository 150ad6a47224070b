"""The semantic layer with the real model over a real SQLite index: a paraphrase finds its memory through
every door that is plain Python (the core ranking, the command line, the agents' MCP store, reflection's
neighbours), the vectors follow the index's one freshness rule, a warm start reads none, the layer says
when it is still filling, a model file that is not the pinned one is never run, and the commands that do
not rank never import any of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.recall.semantic import model as model_module
from kin_memory.recall.semantic.layer import CATCH_UP, SemanticLayer
from kin_memory.recall.semantic.model import Embedder, ModelUnavailable, shared
from kin_memory.recall.service import Recall
from support import paraphrase as P
from support.memfiles import memory, write

SERVER = Path(__file__).resolve().parents[3] / "server"


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    P.build(root)
    return root


def vpaths(hits) -> list[str]:
    return [h.vpath for h, _snippet in hits]


def test_words_alone_miss_the_paraphrase_meaning_finds_it(store: Path) -> None:
    words = Recall(store, semantic=False)
    words.sync_disk()
    assert vpaths(words.search(P.QUERY, (P.WS,))) == []
    both = Recall(store, semantic=True)
    both.sync_disk()
    found = vpaths(both.search(P.QUERY, (P.WS,)))
    assert P.ANSWER in found
    assert P.FOREIGN not in found  # the other workspace's look-alike never leaks
    assert both.semantic_note() is None


def test_operator_view_sees_every_workspace_by_meaning(store: Path) -> None:
    recall = Recall(store, semantic=True)
    recall.sync_disk()
    assert {P.ANSWER, P.FOREIGN} <= set(vpaths(recall.search(P.QUERY, None, 10)))


def test_chat_without_content_words_stays_unanswered(store: Path) -> None:
    recall = Recall(store, semantic=True)
    recall.sync_disk()
    assert recall.search("thanks, that worked!", (P.WS,)) == []


class Counting:
    """The real model, counting the texts it embeds."""

    def __init__(self) -> None:
        self.model = shared()
        self.texts: list[str] = []

    def __call__(self) -> Counting:
        return self

    def embed(self, text: str):
        self.texts.append(text)
        return self.model.embed(text)


def counted_layer(recall: Recall) -> Counting:
    counting = Counting()
    recall._semantic = SemanticLayer(recall.index.db, embedder=counting)  # type: ignore[arg-type]
    return counting


def test_one_freshness_rule_changed_reembeds_unchanged_never(store: Path) -> None:
    recall = Recall(store, semantic=True)
    recall.sync_disk()
    counting = counted_layer(recall)
    layer = recall.semantic()
    assert layer is not None
    assert layer.fill() == 0
    assert len(counting.texts) == 5  # every visible memory once, title and body
    assert any(t.startswith("Translations\nUI strings live") for t in counting.texts)
    counting.texts.clear()
    assert layer.fill() == 0
    assert counting.texts == []  # unchanged: never again
    write(
        store,
        "facts/deploy.md",
        memory("project-fact", "# Deploys\n\nDeploys now wait for a green CI.\n", P.WS),
    )
    recall.sync_disk()
    assert layer.fill() == 0
    assert counting.texts == ["Deploys\nDeploys now wait for a green CI."]
    (store / "facts" / "db.md").unlink()
    recall.sync_disk()
    layer.vectors.refresh()
    assert layer.vectors.count() == 4  # a removed memory's vector goes with its row


def test_a_memory_opened_or_saved_unchanged_keeps_its_vector(store: Path) -> None:
    from kin_memory.store.memory import load
    from kin_memory.store.paths import virtual_of_rel

    recall = Recall(store, semantic=True)
    recall.sync_disk()
    counting = counted_layer(recall)
    layer = recall.semantic()
    assert layer is not None and layer.fill() == 0
    counting.texts.clear()
    path = store / "facts" / "deploy.md"
    opened = load(path, virtual_of_rel("facts/deploy.md"))
    row = recall.index.queries.doc_id(opened.vpath)
    recall.update(opened, overlay=True)  # an editor opened it: the same text, a buffer's freshness
    assert recall.index.queries.doc_id(opened.vpath) == row
    assert layer.fill() == 0 and counting.texts == []  # not embedded again
    recall.update(opened)  # saved without a change
    assert layer.fill() == 0 and counting.texts == []
    write(store, "facts/deploy.md", memory("project-fact", "# Deploys\n\nDeploys wait for review.\n", P.WS))
    recall.update(load(path, opened.vpath), overlay=True)  # typed: a new text is embedded again
    assert recall.index.queries.doc_id(opened.vpath) != row
    assert layer.fill() == 0 and counting.texts == ["Deploys\nDeploys wait for review."]
    hits = vpaths(recall.search("wait for review", (P.WS,)))
    assert hits[:1] == ["/memories/facts/deploy.md"]


def test_warm_start_reads_no_vector_until_something_ranks(store: Path) -> None:
    first = Recall(store, semantic=True)
    first.sync_disk()
    layer = first.semantic()
    assert layer is not None and layer.fill() == 0
    again = Recall(store, semantic=True)
    again.sync_disk()
    warm = again.semantic()
    assert warm is not None and warm.vectors.count() == 0
    assert P.ANSWER in vpaths(again.search(P.QUERY, (P.WS,)))
    assert warm.vectors.count() == 5


def test_while_filling_answers_by_words_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    P.build(root)
    for i in range(CATCH_UP + 6):
        write(root, f"bulk/n{i:03}.md", memory("episodic", f"# Note {i}\n\nfiller words {i}\n", P.WS))
    recall = Recall(root, semantic=True)
    recall.sync_disk()
    assert vpaths(recall.search(P.QUERY, (P.WS,))) == []  # words only: not a "no such memory" ...
    note = recall.semantic_note()
    assert note is not None and "still filling (0 of 35 memories)" in note  # ... it says why
    layer = recall.semantic()
    assert layer is not None and layer.fill() == 0
    assert P.ANSWER in vpaths(recall.search(P.QUERY, (P.WS,)))
    assert recall.semantic_note() is None


def test_a_model_file_not_the_pinned_one_is_never_run(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ModelUnavailable, match="not the one kin-memory was built with"):
        Embedder()
    recall = Recall(store, semantic=True)
    recall._semantic = SemanticLayer(recall.index.db, embedder=Embedder)
    recall.sync_disk()
    assert vpaths(recall.search(P.QUERY, (P.WS,))) == []  # words still answer
    note = recall.semantic_note()
    assert note is not None and note.startswith(
        "semantic recall is off: the sentence model's file model.onnx"
    )


def test_a_changed_model_file_is_refused_and_a_missing_one_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changed = tmp_path / "model.onnx"
    data = bytearray(model_module.weights_path().read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte of the weights, the file still parses
    changed.write_bytes(bytes(data))
    monkeypatch.setattr(model_module, "weights_path", lambda: changed)
    with pytest.raises(ModelUnavailable, match="model.onnx is not the one kin-memory was built with"):
        Embedder()
    changed.unlink()
    with pytest.raises(ModelUnavailable, match=r"model.onnx cannot be read \(No such file or directory\)"):
        Embedder()


def test_one_text_per_call_gives_unit_vectors_independent_of_neighbours() -> None:
    model = shared()
    a = model.embed("the staging database is reached through pgbouncer")
    model.embed("something else entirely, and much longer " * 40)
    b = model.embed("the staging database is reached through pgbouncer")
    assert a.shape == (384,)
    assert abs(float(a @ a) - 1.0) < 1e-5
    assert float(abs(a - b).max()) == 0.0


def test_reflection_neighbours_by_meaning(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kin_memory.reflect.neighbours import neighbours

    monkeypatch.setenv("HOME", str(store.parent))
    transcript = "user: can we ship the app in Spanish?\nassistant: let me check."
    monkeypatch.setenv("KIN_RECALL_SEMANTIC", "off")
    assert P.ANSWER not in [n.vpath for n in neighbours(store, transcript, (P.WS,))]
    monkeypatch.setenv("KIN_RECALL_SEMANTIC", "on")
    found = [n.vpath for n in neighbours(store, transcript, (P.WS,))]
    assert P.ANSWER in found and P.FOREIGN not in found


def test_mcp_memory_search_by_meaning(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kin_memory.mcp.agents import AgentStore

    monkeypatch.setenv("HOME", str(store.parent))
    monkeypatch.setenv("KIN_RECALL_SEMANTIC", "off")
    assert AgentStore(store).search(P.QUERY, 5, P.WS).text == "No matching memories."
    monkeypatch.setenv("KIN_RECALL_SEMANTIC", "on")
    answer = AgentStore(store).search(P.QUERY, 5, P.WS).text
    assert P.ANSWER in answer and P.FOREIGN not in answer


def cli(store: Path, *args: str, semantic: str = "on") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "KIN_MEMORY_DIR": str(store),
        "HOME": str(store.parent),
        "KIN_RECALL_SEMANTIC": semantic,
    }
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_cli_search_by_meaning(store: Path) -> None:
    off = cli(store, "search", P.QUERY, "--workspace", P.WS, "--json", semantic="off")
    assert json.loads(off.stdout)["results"] == []
    on = cli(store, "search", P.QUERY, "--workspace", P.WS, "--json")
    paths = [r["path"] for r in json.loads(on.stdout)["results"]]
    assert P.ANSWER in paths and P.FOREIGN not in paths


def test_cli_reindex_fills_the_layer(store: Path) -> None:
    done = cli(store, "reindex")
    assert done.returncode == 0, done.stderr
    assert "semantic layer filled in" in done.stdout
    again = Recall(store, semantic=True)
    layer = again.semantic()
    assert layer is not None and layer.state().missing == 0 and layer.state().total == 5


LAYER_MODULES = ("numpy", "onnxruntime", "tokenizers", "kin_memory.recall.semantic")


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--format", "json"],
        ["tool", '{"command": "view", "path": "/memories"}'],
        ["stats"],
        ["sync"],
    ],
)
def test_commands_that_do_not_rank_never_import_the_layer(store: Path, args: list[str]) -> None:
    script = (
        "import sys\n"
        "from kin_memory.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', sorted(m for m in {LAYER_MODULES!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(store.parent), "PYTHONPATH": str(SERVER)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert "LOADED []" in done.stdout, done.stdout + done.stderr


def test_search_with_the_layer_off_never_imports_it(store: Path) -> None:
    script = (
        "import sys\n"
        "from kin_memory.cli import main\n"
        "try:\n"
        f"    main(['search', {P.QUERY!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', sorted(m for m in {LAYER_MODULES!r} if m in sys.modules))\n"
    )
    env = {
        **os.environ,
        "KIN_MEMORY_DIR": str(store),
        "HOME": str(store.parent),
        "KIN_RECALL_SEMANTIC": "off",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert "LOADED []" in done.stdout, done.stdout + done.stderr


def test_missing_vectors_and_the_total_are_those_of_the_full_text_rows(store: Path) -> None:
    """What the fill counts (after every write in the server) is asked of `docs` alone: it must be the
    memories with a full-text row, never a session memory, whatever their category says."""
    write(store, "sessions/today.md", memory("session", "# Today\n\nWe tried the deploy again.\n"))
    write(store, "facts/odd.md", "---\ncategory: [not, a, name]\n---\n# Odd\n\nAn odd category.\n")
    recall = Recall(store, semantic=True)
    recall.sync_disk()
    layer = recall.semantic()
    assert layer is not None and layer.fill() == 0

    def full_text(sql: str) -> list:
        return layer.db.run(lambda c: c.execute(sql).fetchall(), [])

    with_rows = full_text("SELECT d.id FROM docs d JOIN fts f ON f.rowid = d.id ORDER BY d.id")
    assert layer.state().total == len(with_rows) == len(full_text("SELECT rowid FROM fts"))
    assert layer.vectors.missing() == []
    dropped = with_rows[-1][0]
    layer.db.transaction(lambda c: c.execute("DELETE FROM vectors WHERE id = ?", (dropped,)))
    assert [doc_id for doc_id, _ in layer.vectors.missing()] == [dropped]
    session = full_text("SELECT id FROM docs WHERE vpath = '/memories/sessions/today.md'")
    assert session and session[0] not in with_rows
