"""Measure recall on the labeled set: kin-memory against `bm25s` and a word-count baseline.

    make recall-eval
    .venv/bin/python scripts/recall_eval/run.py [--worst 10] [--json PATH] [--keep-store DIR]

Writes the set out as a store of memory files in a temporary folder, indexes it with kin-memory's
recall, asks every system every user turn (search) and every hover case, and prints nDCG@5, MRR@5,
Recall@5 and workspace leaks side by side, a breakdown by kind of turn, and kin-memory's worst turns
with what it returned and why it likely missed. The results go to .bench/recall_eval.json as well.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "recall_eval"  # noqa: A001

from recall_eval import BENCH_DIR  # noqa: E402
from recall_eval.dataset import TUNING_SLICES, Case, LabeledSet, load, materialize  # noqa: E402
from recall_eval.diagnose import Finding, diagnose  # noqa: E402
from recall_eval.metrics import CaseScore, K, Summary, score, summarize  # noqa: E402
from recall_eval.systems import Bm25s, KinMemory, System, WordCount, words  # noqa: E402


@dataclass(frozen=True)
class CaseResult:
    case: Case
    ranked: list[str]
    score: CaseScore | None  # None when the case has nothing to recall
    leaks: list[str]
    session: list[str]
    seconds: float


def run_case(system: System, mode: str, case: Case, labeled: LabeledSet) -> CaseResult:
    ask: Callable[[Case], list[str]] = system.search if mode == "search" else system.hover
    start = time.perf_counter()
    ranked = ask(case)[:K]
    seconds = time.perf_counter() - start
    memories = labeled.memories
    leaks = [r for r in ranked if r not in memories or not memories[r].visible_in(case.workspace)]
    session = [r for r in ranked if r in memories and not memories[r].indexed]
    scored = score(ranked, case.relevant) if case.answerable else None
    return CaseResult(case, ranked, scored, leaks, session, seconds)


def summary_of(results: Sequence[CaseResult]) -> Summary:
    return summarize(
        [r.score for r in results if r.score is not None],
        sum(len(r.leaks) for r in results),
        sum(len(r.session) for r in results),
        [len(r.ranked) for r in results if r.score is None],
    )


def table(title: str, rows: dict[str, Summary]) -> list[str]:
    out = [
        title,
        "| system | nDCG@5 | MRR@5 | Recall@5 | workspace leaks | session returned | results when nothing fits |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in rows.items():
        out.append(
            f"| {name} | {s.ndcg:.3f} | {s.mrr:.3f} | {s.recall:.3f} | {s.leaks} | {s.session} | "
            f"{s.noise_mean:.1f} of {K} ({s.noise_cases} cases) |"
        )
    return out


def by_slice(results: dict[str, list[CaseResult]], semantic: str) -> list[str]:
    """nDCG@5 per slice of turns (main, paraphrase, and held-out when asked), every system."""
    names = list(results)
    slices = list(dict.fromkeys(r.case.slice for r in next(iter(results.values()))))
    out = [
        f"nDCG@5 by slice (kin-memory's semantic layer {semantic})",
        "| slice | turns | " + " | ".join(names) + " |",
    ]
    out.append("|---|---|" + "---|" * len(names))
    for name_of_slice in slices:
        cells = []
        n = 0
        for name in names:
            scored = [r.score.ndcg for r in results[name] if r.score and r.case.slice == name_of_slice]
            n = len(scored)
            cells.append(f"{sum(scored) / n:.3f}")
        out.append(f"| {name_of_slice} | {n} | " + " | ".join(cells) + " |")
    return out


def by_kind(results: dict[str, list[CaseResult]]) -> list[str]:
    """nDCG@5 per kind of turn, every system side by side (a turn counts under each of its kinds)."""
    names = list(results)
    kinds = sorted({k for r in next(iter(results.values())) if r.score for k in r.case.kinds})
    out = ["nDCG@5 by kind of turn", "| kind | turns | " + " | ".join(names) + " |"]
    out.append("|---|---|" + "---|" * len(names))
    for kind in kinds:
        cells = []
        n = 0
        for name in names:
            scored = [r.score.ndcg for r in results[name] if r.score and kind in r.case.kinds]
            n = len(scored)
            cells.append(f"{sum(scored) / n:.3f}")
        out.append(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    return out


def describe(result: CaseResult, labeled: LabeledSet, findings: list[Finding], rank: int) -> list[str]:
    case, s = result.case, result.score
    assert s is not None
    query = words(case.query)
    out = [
        f"{rank:2}. {case.id}  nDCG@5 {s.ndcg:.2f}  MRR@5 {s.mrr:.2f}  [{', '.join(case.kinds)}]  in {case.workspace}",
        f"    turn: {case.query}",
    ]
    for i, rid in enumerate(result.ranked, start=1):
        memory = labeled.memories.get(rid)
        category = memory.effective_category if memory else "?"
        shared = sorted(query & words(memory.content)) if memory else []
        out.append(
            f"    {i}. {rid} (grade {case.relevant.get(rid, 0)}, {category}) shares {', '.join(shared)}"
        )
    if not result.ranked:
        out.append("    (nothing returned)")
    missed = [f"{m} ({g})" for m, g in case.relevant.items() if m not in result.ranked]
    if missed:
        out.append(f"    not in top {K}: {', '.join(missed)}")
    grouped: dict[str, list[str]] = {}
    for f in findings:
        grouped.setdefault(f.cause, []).append(f.detail)
    for cause, details in grouped.items():
        out.append(f"    cause: {cause}: {'; '.join(details)}")
    return out


def worst(
    results: list[CaseResult], labeled: LabeledSet, n: int
) -> tuple[list[str], Counter[str], dict[str, list[Finding]]]:
    failing = [r for r in results if r.score is not None and r.score.ndcg < 1.0]
    findings = {r.case.id: diagnose(r.case, r.ranked, labeled) for r in failing}
    # The turns that matter most: the first snippet the agent reads is not the answer.
    missed = [r for r in failing if not r.ranked or r.case.relevant.get(r.ranked[0], 0) < 2]
    causes: Counter[str] = Counter()
    for r in missed:
        causes.update({f.cause for f in findings[r.case.id]})  # a cause counts once per turn
    ordered = sorted(failing, key=lambda r: (r.score.ndcg, r.score.mrr, r.case.id))  # type: ignore[union-attr]
    lines = [f"{n} worst turns for kin-memory (by nDCG@5, then MRR@5)"]
    for i, r in enumerate(ordered[:n], start=1):
        lines += describe(r, labeled, findings[r.case.id], i)
    answered = sum(1 for r in results if r.score is not None)
    lines += [
        "",
        f"kin-memory's first result is not the answer in {len(missed)} of {answered} turns "
        f"(nDCG@5 < 1 in {len(failing)}); likely causes there (a turn can have several):",
    ]
    lines += [f"  {cause}: {count} turns" for cause, count in causes.most_common()]
    return lines, causes, findings


def trap_pressure(labeled: LabeledSet, bm25: Bm25s) -> tuple[int, int]:
    """How many trap turns would get a trap memory from bm25s ranking every workspace's memories:
    evidence that the traps look like answers, so a zero leak count means something."""
    trapped = [t for t in labeled.turns if t.traps]
    bitten = sum(1 for t in trapped if set(bm25.unfiltered(t)) & set(t.traps))
    return bitten, len(trapped)


def to_json(
    labeled: LabeledSet,
    summaries: dict[str, dict[str, Summary]],
    results: dict[str, dict[str, list[CaseResult]]],
    causes: Counter[str],
    findings: dict[str, list[Finding]],
    seconds: float,
) -> dict[str, object]:
    return {
        "set": {
            "memories": len(labeled.memories),
            "turns": len(labeled.turns),
            "hover": len(labeled.hover),
        },
        "k": K,
        "seconds": round(seconds, 2),
        "summary": {mode: {name: asdict(s) for name, s in rows.items()} for mode, rows in summaries.items()},
        "kin_memory_failure_causes": dict(causes),
        "cases": {
            mode: {
                name: [
                    {
                        "id": r.case.id,
                        "ranked": r.ranked,
                        "score": asdict(r.score) if r.score else None,
                        "leaks": r.leaks,
                        "session": r.session,
                        "ms": round(r.seconds * 1000, 3),
                        **(
                            {"causes": [asdict(f) for f in findings.get(r.case.id, [])]}
                            if name == KinMemory.name and mode == "search"
                            else {}
                        ),
                    }
                    for r in rows
                ]
                for name, rows in by_system.items()
            }
            for mode, by_system in results.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--worst", type=int, default=10, help="how many of kin-memory's worst turns to show")
    parser.add_argument(
        "--json", type=Path, default=BENCH_DIR / "recall_eval.json", help="where to write results"
    )
    parser.add_argument("--keep-store", type=Path, help="also copy the materialized store to this folder")
    parser.add_argument(
        "--semantic", choices=("on", "off"), default="on", help="kin-memory's semantic layer (on, as shipped)"
    )
    parser.add_argument(
        "--heldout",
        action="store_true",
        help="add the held-out slice: for one final look, never while tuning",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    labeled = load(slices=(*TUNING_SLICES, "heldout") if args.heldout else TUNING_SLICES)
    try:
        bm25 = Bm25s(labeled)
    except ImportError:
        print("bm25s is not installed: pip install -e '.[eval]' (make recall-eval does it)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="recall-eval-") as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        materialize(labeled, root)
        if args.keep_store:
            shutil.copytree(root, args.keep_store, dirs_exist_ok=True)
        kin = KinMemory(root, semantic=args.semantic == "on")
        systems: list[System] = [kin, bm25, WordCount(labeled)]
        cases = {"search": labeled.turns, "hover": labeled.hover}
        results = {
            mode: {s.name: [run_case(s, mode, c, labeled) for c in group] for s in systems}
            for mode, group in cases.items()
        }
        kin.close()
    summaries = {mode: {name: summary_of(rs) for name, rs in rows.items()} for mode, rows in results.items()}
    answerable = sum(1 for t in labeled.turns if t.answerable)
    hover_answerable = sum(1 for h in labeled.hover if h.answerable)
    lines = [
        f"Recall on the labeled set: {len(labeled.memories)} memories, {len(labeled.turns)} user turns, "
        f"{len(labeled.hover)} hover cases; top {K}",
        "",
    ]
    lines += table(
        f"search: each user turn ({answerable} with an answer, {len(labeled.turns) - answerable} with nothing to recall)",
        summaries["search"],
    )
    lines.append("")
    lines += table(
        f"hover: the paragraph under the pointer ({hover_answerable} with related memories, "
        f"{len(labeled.hover) - hover_answerable} with none)",
        summaries["hover"],
    )
    bitten, trapped = trap_pressure(labeled, bm25)
    lines.append(
        f"traps: without the workspace filter, bm25s would return another workspace's look-alike memory "
        f"for {bitten} of the {trapped} trap turns"
    )
    lines.append("")
    lines += by_slice(results["search"], args.semantic)
    lines.append("")
    lines += by_kind(results["search"])
    lines.append("")
    worst_lines, causes, findings = worst(results["search"][KinMemory.name], labeled, args.worst)
    lines += worst_lines
    seconds = time.perf_counter() - started
    lines += ["", f"run time {seconds:.1f} s"]
    print("\n".join(lines))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(to_json(labeled, summaries, results, causes, findings, seconds), indent=1),
        encoding="utf-8",
    )
    print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
