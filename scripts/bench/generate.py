"""Seeded synthetic memory stores, cached under ``.bench/stores/`` and reused when seed and size match.

A store is ``<cache>/stores/<label>-s<seed>-v<version>/`` holding

- ``memory/``: the store itself (1–3 folder levels, 200–2,000-byte files, MEMORY.md at the root);
- ``repos/alpha`` and ``repos/beta``: real folders used as workspace stamps (alpha is the editor's
  workspace, beta a foreign one; ``repos/gone`` is stamped but never exists: a moved repository);
- ``manifest.json``: the vocabulary by Zipf rank, every file's age, the 2 KB files, and a marker that
  generation completed.

Vocabulary: ~5,000 pronounceable pseudo-words, drawn with Zipf weights 1/rank so rank 0 is the most common
term and ranks past 2,500 are rare. Ages follow each category's lifecycle so some memories are stale,
expiring or expired; mtimes are re-applied relative to *now* when a cached store is reused.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
import time
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from . import CACHE

GEN_VERSION = 1
VOCAB_SIZE = 5000
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
DAY = 86400.0

BAD_CATEGORIES = ["epsiodic", "project_fact", "fact", "notes", "prefrence", "todo"]
NEAR_CATEGORIES = ["Project-Fact", "EPISODIC", "'preference'", "Session"]
TOP_FOLDERS = ["projects", "episodes", "prefs", "sessions", "notes", "people", "infra", "research"]


@dataclass(frozen=True)
class GeneratedStore:
    label: str
    files: int
    seed: int
    base: Path
    vocab: list[str]
    two_kb: list[str]  # paths relative to the memory root, ~2 KB each
    folders: list[str]  # existing folders relative to the memory root

    @property
    def root(self) -> Path:
        return self.base / "memory"

    @property
    def alpha(self) -> Path:
        return self.base / "repos" / "alpha"


def parse_size(label: str) -> int:
    label = label.strip().lower()
    if label in SIZES:
        return SIZES[label]
    if label.endswith("k"):
        return int(float(label[:-1]) * 1000)
    return int(label)


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def make_vocabulary(rnd: random.Random, n: int = VOCAB_SIZE) -> list[str]:
    onsets = [
        "b",
        "c",
        "d",
        "f",
        "g",
        "h",
        "j",
        "k",
        "l",
        "m",
        "n",
        "p",
        "r",
        "s",
        "t",
        "v",
        "w",
        "z",
        "br",
        "cl",
        "dr",
        "fl",
        "gr",
        "pl",
        "st",
        "tr",
        "sh",
        "ch",
        "th",
        "qu",
    ]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io"]
    codas = ["", "", "", "n", "r", "s", "t", "l", "m", "x", "nd", "st", "ck"]
    words: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        syllables = rnd.choices([1, 2, 3, 4], weights=[2, 5, 3, 1])[0]
        w = "".join(rnd.choice(onsets) + rnd.choice(vowels) + rnd.choice(codas) for _ in range(syllables))
        if len(w) >= 3 and w not in words:
            words.add(w)
            out.append(w)
    # Shorter words are the commoner ones in real text: rank by length, ties in random order.
    rnd.shuffle(out)
    out.sort(key=len)
    return out


def rank_of(store: GeneratedStore) -> dict[str, int]:
    return {w: i for i, w in enumerate(store.vocab)}


class _Writer:
    def __init__(self, rnd: random.Random, vocab: list[str]) -> None:
        self.rnd = rnd
        self.vocab = vocab
        self.cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(vocab))))
        self.total = self.cum[-1]

    def words(self, k: int) -> list[str]:
        rnd, cum, total, vocab = self.rnd, self.cum, self.total, self.vocab
        return [vocab[bisect_left(cum, rnd.random() * total)] for _ in range(k)]

    def sentence(self) -> str:
        ws = self.words(self.rnd.randint(5, 16))
        return ws[0].capitalize() + " " + " ".join(ws[1:]) + "."


def _age_for(category: str, rnd: random.Random) -> float:
    """Seconds since last touch, following the category's lifecycle (some fresh, some past the thresholds)."""
    if category == "session":
        return rnd.choice([rnd.uniform(0, 2), rnd.uniform(2, 24), rnd.uniform(24, 96)]) * 3600
    if category == "episodic":
        return rnd.choice([rnd.uniform(0, 35), rnd.uniform(35, 42), rnd.uniform(42, 120)]) * DAY
    if category == "preference":
        return rnd.uniform(0, 900) * DAY
    return rnd.choice([rnd.uniform(0, 180), rnd.uniform(0, 180), rnd.uniform(180, 800)]) * DAY


def _frontmatter(rnd: random.Random, w: _Writer, category: str, stamps: dict[str, str]) -> tuple[str, str]:
    """Returns (the text before the body, the category the store reads for lifecycle purposes)."""
    roll = rnd.random()
    if roll < 0.02:
        return "", "project-fact"  # no frontmatter (KM106)
    if roll < 0.03:
        return f"category: {category}\n\n", "project-fact"  # bare first line (KM100)
    if roll < 0.035:
        return (
            f"---\ncategory: {category}\ntags: [{w.words(1)[0]}, {w.words(1)[0]}\n---\n",
            "project-fact",
        )  # KM102
    if roll < 0.04:
        return f"---\ncategory: {category}\n", "project-fact"  # unclosed fence (KM101)
    lines = ["---"]
    read_as = category
    cat_roll = rnd.random()
    if cat_roll < 0.03:
        lines.append(f"category: {rnd.choice(BAD_CATEGORIES)}")  # KM201
        read_as = "project-fact"
    elif cat_roll < 0.045:
        lines.append(f"category: {rnd.choice(NEAR_CATEGORIES)}")  # KM202
        read_as = "project-fact"
    elif cat_roll < 0.06:
        read_as = "project-fact"  # no category key (KM200)
    else:
        lines.append(f"category: {category}")
    if category in ("project-fact", "episodic"):
        s = rnd.random()
        if s < 0.35:
            lines.append(f"workspace: {stamps['alpha']}")
        elif s < 0.55:
            lines.append(f"workspace: {stamps['beta']}")  # foreign workspace (KM303)
        elif s < 0.60:
            lines.append(f"workspace: {stamps['gone']}")  # moved repository (KM301)
        elif s < 0.75:
            lines.append("workspace: global")
    elif category == "preference" and rnd.random() < 0.1:
        lines.append(f"workspace: {stamps['alpha']}")  # KM306
    if rnd.random() < 0.3:
        lines.append(f"tags: [{', '.join(w.words(rnd.randint(1, 3)))}]")
    if rnd.random() < 0.1:
        lines.append(f"source: {rnd.choice(['agent', 'reflection', 'user'])}")
    lines.append("---")
    return "\n".join(lines) + "\n", read_as


def _body(rnd: random.Random, w: _Writer, title: str, target: int, links: list[str]) -> str:
    parts = [f"# {title}", ""]
    size = len(title) + 4
    while size < target:
        kind = rnd.random()
        if kind < 0.2:
            block = "\n".join(f"- {w.sentence()}" for _ in range(rnd.randint(2, 5)))
        elif kind < 0.25 and links:
            block = f"See [{w.words(1)[0]}]({rnd.choice(links)}) for {' '.join(w.words(4))}."
        elif kind < 0.3:
            block = f"## {' '.join(w.words(rnd.randint(1, 3))).capitalize()}"
        else:
            block = " ".join(w.sentence() for _ in range(rnd.randint(1, 4)))
        parts += [block, ""]
        size += len(block) + 2
    text = "\n".join(parts)
    if len(text) > target:
        cut = text.rfind(" ", 0, target)
        text = text[: cut if cut > len(title) + 4 else target]
    return text.rstrip() + "\n"


def _manifest_path(base: Path) -> Path:
    return base / "manifest.json"


def _repositories(base: Path) -> None:
    """alpha and beta are git repositories of their own: a workspace is a repository's top level, and the
    bench's cache sits inside the project's checkout, whose top level every plain folder below it shares."""
    for name in ("alpha", "beta"):
        folder = base / "repos" / name
        if folder.is_dir() and not (folder / ".git").exists():
            subprocess.run(["git", "init", "-q", str(folder)], check=True)


def generate(n: int, seed: int = 7, cache: Path = CACHE, log=print) -> GeneratedStore:
    label = size_label(n)
    base = cache / "stores" / f"{label}-s{seed}-v{GEN_VERSION}"
    manifest = _manifest_path(base)
    if manifest.is_file():
        data = json.loads(manifest.read_text())
        if data.get("complete") and data.get("files") == n and data.get("seed") == seed:
            _reapply_mtimes(base / "memory", data)
            _repositories(base)
            return _from_manifest(label, base, data)
    log(f"generating a {label} store (seed {seed}) in {base} ...")
    started = time.perf_counter()
    if base.exists():
        shutil.rmtree(base)
    root = base / "memory"
    root.mkdir(parents=True)
    for name in ("alpha", "beta"):
        (base / "repos" / name).mkdir(parents=True)
    _repositories(base)
    stamps = {name: os.path.realpath(base / "repos" / name) for name in ("alpha", "beta")}
    stamps["gone"] = os.path.realpath(base / "repos") + "/gone"
    rnd = random.Random(seed)
    vocab = make_vocabulary(rnd)
    w = _Writer(rnd, vocab)

    # Folder tree: 1–3 levels, top level by topic, lower levels named from the vocabulary.
    n_folders = max(8, n // 60)
    folders: list[str] = []
    for i in range(n_folders):
        depth = rnd.choices([1, 2, 3], weights=[3, 4, 3])[0]
        parts = [TOP_FOLDERS[i % len(TOP_FOLDERS)]] + [rnd.choice(vocab[:800]) for _ in range(depth - 1)]
        folders.append("/".join(parts))
    folders = sorted(set(folders))
    for f in folders:
        (root / f).mkdir(parents=True, exist_ok=True)

    categories = ["project-fact", "episodic", "preference", "session"]
    files: list[str] = []
    ages: list[float] = []
    two_kb: list[str] = []
    now = time.time()
    for i in range(n):
        category = rnd.choices(categories, weights=[40, 32, 16, 12])[0]
        folder = rnd.choice(folders)
        title_words = w.words(rnd.randint(2, 5))
        title = " ".join(title_words).capitalize()
        rel = f"{folder}/{'-'.join(title_words[:3])}-{i}.md"
        head, read_as = _frontmatter(rnd, w, category, stamps)
        target = rnd.randint(200, 2000) - len(head.encode())
        links = (
            ["../" * folder.count("/") + "../" + p for p in files[-50:][:3]]
            if files and rnd.random() < 0.5
            else []
        )
        text = head + _body(rnd, w, title, max(target, 60), links)
        path = root / rel
        path.write_text(text)
        age = _age_for(read_as, rnd)
        os.utime(path, (now - age, now - age))
        files.append(rel)
        ages.append(round(age, 1))
        if len(text) >= 1900 and head.startswith("---\ncategory:") and len(two_kb) < 50:
            two_kb.append(rel)

    # MEMORY.md: a curated index, mostly valid links, a few dangling ones (KM502).
    picks = rnd.sample(range(n), min(n, 150))
    lines = ["# Memory index", ""]
    for k, i in enumerate(picks):
        rel = files[i] if k % 30 else files[i].replace(".md", "-gone.md")
        lines.append(f"- [{' '.join(w.words(3)).capitalize()}]({rel})")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")

    data = {
        "version": GEN_VERSION,
        "seed": seed,
        "files": n,
        "generated_at": now,
        "vocab": vocab,
        "two_kb": two_kb,
        "folders": folders,
        "paths": files,
        "ages": ages,
        "complete": True,
    }
    manifest.write_text(json.dumps(data))
    log(f"  generated {n} files in {time.perf_counter() - started:.1f}s")
    return _from_manifest(label, base, data)


def _reapply_mtimes(root: Path, data: dict) -> None:
    """Ages are relative to now: re-stamp a cached store so stale/expired proportions stay the same."""
    now = time.time()
    if now - float(data.get("generated_at", now)) < 600:
        return
    for rel, age in zip(data["paths"], data["ages"], strict=True):
        try:
            os.utime(root / rel, (now - age, now - age))
        except OSError:
            pass
    data["generated_at"] = now
    _manifest_path(root.parent).write_text(json.dumps(data))


def _from_manifest(label: str, base: Path, data: dict) -> GeneratedStore:
    return GeneratedStore(
        label=label,
        files=int(data["files"]),
        seed=int(data["seed"]),
        base=base,
        vocab=list(data["vocab"]),
        two_kb=list(data["two_kb"]),
        folders=list(data["folders"]),
    )
