"""First correct search after spawn: how long until `kin.memory.search` finds a memory the store has.

Warm restart case (the recall index of the previous run is present). The client spawns the server,
initializes, sends `initialized` and then asks at once, again and again (one request in flight), until the
result holds the memory. Every answer before that is classified: an empty result that says it is complete
is a false "no match" (it must never happen; `complete: false` is the honest answer while the index
fills), a complete result with other memories but not this one is wrong too ("wrong_complete"), an
incomplete one is honest, an error is counted apart.

Two probes: a memory written just before the spawn with a freshly generated word (the server has never
indexed it), and the store's rarest word: one that occurs in exactly one memory, visible in every
workspace (a word of the text when one is that rare; in a generated store, where every vocabulary word
is in many memories, the number in a file's name, which the index holds in its path column).
"""

from __future__ import annotations

import random
import re
import sqlite3
import string
import time
from dataclasses import dataclass

from kin_memory.store.paths import virtual_of_rel
from kin_memory.store.workspace import GLOBAL

from .client import LspClient, initialize_params
from .floors import recall_db
from .generate import GeneratedStore
from .measure import server_cmd, server_env

SEARCH = "kin.memory.search"
PROBE_NAME = "bench-first-search.md"
RARE_CANDIDATES = 40  # rarest indexed words checked against the files, in one pass over the store


@dataclass(frozen=True)
class Probe:
    kind: str  # "new word" or "rarest word"
    word: str
    rel: str  # the memory that holds it, relative to the store root

    @property
    def vpath(self) -> str:
        return virtual_of_rel(self.rel)


def fresh_word(rnd: random.Random) -> str:
    """Letters only (no digits, no separators: one token for every tokenizer), never in the store."""
    return "zq" + "".join(rnd.choice(string.ascii_lowercase) for _ in range(10))


def write_probe_memory(store: GeneratedStore, word: str) -> Probe:
    """A new global project fact whose body alone holds the word, in an existing folder."""
    rel = f"{store.folders[0]}/{PROBE_NAME}"
    (store.root / rel).write_text(
        "---\ncategory: project-fact\n---\n# First search probe\n\n"
        f"Written before the server started: the build cache key is {word} for this run.\n"
    )
    return Probe("new word", word, rel)


def remove_probe_memory(store: GeneratedStore, probe: Probe) -> None:
    (store.root / probe.rel).unlink(missing_ok=True)


def _single_doc_terms(store: GeneratedStore) -> list[tuple[str, str]]:
    """(term, vpath) for terms the recall index holds in exactly one memory, a global one (visible in
    every workspace): words first, then other tokens (in a generated store no vocabulary word is that
    rare, but each file name's number is)."""
    conn = sqlite3.connect(f"file:{recall_db(store)}?mode=ro", uri=True)
    try:
        terms = [t for (t,) in conn.execute("SELECT term FROM vocab WHERE doc = 1")]
        terms.sort(key=lambda t: (not t.isalpha(), -len(t), t))
        out: list[tuple[str, str]] = []
        for term in terms:
            rows = conn.execute(
                "SELECT d.vpath, d.scope FROM fts f JOIN docs d ON d.id = f.rowid WHERE fts MATCH ?",
                (f'"{term}"',),
            ).fetchall()
            if len(rows) == 1 and rows[0][1] == GLOBAL:
                out.append((term, rows[0][0]))
                if len(out) >= RARE_CANDIDATES:
                    break
        return out
    finally:
        conn.close()


def _files_holding(store: GeneratedStore, terms: list[str]) -> dict[str, set[str]]:
    """term → the files (relative paths; MEMORY.md, not a memory, left out) whose path or text holds it as
    a whole word."""
    found: dict[str, set[str]] = {t: set() for t in terms}
    if not terms:
        return found
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, terms)) + r")\b")
    for path in store.root.rglob("*.md"):
        rel = path.relative_to(store.root).as_posix()
        if rel == "MEMORY.md" or any(part.startswith(".") for part in rel.split("/")):
            continue
        text = rel + "\n" + path.read_text(errors="replace")
        for term in set(pattern.findall(text.lower())):
            found[term].add(rel)
    return found


def rarest_word(store: GeneratedStore) -> Probe | None:
    """A word that occurs in exactly one memory, a global one: taken from the recall index of the
    previous run, then confirmed against the files themselves (paths included: the index holds them)."""
    candidates = _single_doc_terms(store)
    holders = _files_holding(store, [t for t, _ in candidates])
    for term, vpath in candidates:
        files = holders[term]
        if len(files) == 1 and virtual_of_rel(next(iter(files))) == vpath:
            return Probe("rarest word", term, next(iter(files)))
    return None


def _holds(result: dict, probe: Probe) -> bool:
    return any(hit.get("path") == probe.vpath for hit in result.get("results") or [])


def _since_spawn(client: LspClient, method: str, params: dict, timeout: float = 120.0) -> tuple[float, dict]:
    """Send a request; (seconds from the spawn to the arrival of its answer, the answer)."""
    sent = time.perf_counter()
    secs, msg = client.call(method, params, timeout)
    return sent + secs - client.started, msg


def first_correct_search(store: GeneratedStore, probe: Probe, timeout: float) -> dict:
    """Spawn → the first `kin.memory.search` answer holding the probe's memory, and what came before."""
    client = LspClient(server_cmd(), server_env(store), cwd=store.alpha)
    counts = {"answers": 0, "false_no_match": 0, "wrong_complete": 0, "incomplete": 0, "errors": 0}
    out: dict = {"probe": probe.kind, "word": probe.word, "memory": probe.vpath}
    try:
        out["initialize_s"] = round(_since_spawn(client, "initialize", initialize_params(store.alpha))[0], 3)
        client.notify("initialized", {})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answered, msg = _since_spawn(
                client, "workspace/executeCommand", {"command": SEARCH, "arguments": [{"query": probe.word}]}
            )
            counts["answers"] += 1
            out.setdefault("first_answer_s", round(answered, 3))
            result = msg.get("result")
            if "error" in msg or not isinstance(result, dict):
                counts["errors"] += 1
                out.setdefault("first_error", (msg.get("error") or {}).get("message", "no result"))
                continue
            if _holds(result, probe):
                out["found_s"] = round(answered, 3)
                break
            if not result.get("complete", True):
                counts["incomplete"] += 1
            elif result.get("results"):
                counts["wrong_complete"] += 1
            else:
                counts["false_no_match"] += 1
    finally:
        client.close()
    out.update(counts)
    if "found_s" not in out:
        out["error"] = f"the memory was not found within {timeout:.0f}s"
    return out


def first_search_measures(store: GeneratedStore, timeout: float, log=print) -> dict:
    """Both probes, each on a fresh spawn; the probe memory is removed afterwards whatever happens."""
    out: dict = {}
    rare = rarest_word(store)  # from the index as the previous run left it, before the probe memory
    probe = write_probe_memory(store, fresh_word(random.Random()))
    try:
        out["new_word"] = first_correct_search(store, probe, timeout)
    finally:
        remove_probe_memory(store, probe)
    log(f"  first correct search, new word: {_summary(out['new_word'])}")
    if rare is None:
        out["rarest_word"] = {"error": "no word occurs in exactly one global memory"}
    else:
        out["rarest_word"] = first_correct_search(store, rare, timeout)
    log(f"  first correct search, rarest word: {_summary(out['rarest_word'])}")
    return out


def _summary(r: dict) -> str:
    if "found_s" not in r:
        return r.get("error", "not found")
    return (
        f"{r['found_s']}s after {r['answers']} answers "
        f"({r['false_no_match']} false 'no match', {r['incomplete']} incomplete)"
    )
