"""The contradiction detector and KM604: true and false cases, and the measured precision on the labeled set."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.findings import contradictions as km604
from kin_memory.findings.catalog import CATALOG
from kin_memory.findings.claims import claims
from kin_memory.findings.conflicts import contradiction
from kin_memory.store.memory import from_text

REPO = Path(__file__).resolve().parents[3]
EVALUATE = REPO / "scripts" / "contradictions" / "evaluate.py"


def memory(vpath: str, body: str, fm: str = "category: project-fact\nworkspace: global\n"):
    text = f"---\n{fm}---\n{body}"
    return from_text(Path("/store" + vpath[len("/memories") :]), vpath, text, 0.0, len(text))


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [
        ("The billing database listens on port 5432.", "Billing DB port is 5433.", "port 5432 vs 5433"),
        ("Always squash commits when merging.", "Never squash commits when merging.", "always squash"),
        ("The API gateway host is gw1.example.com.", "The API gateway runs on gw2.example.com.", "host"),
        ("We build with Node 18.17.", "The project builds with Node 20.11.", "version 18.17 vs 20.11"),
        ("The worker pool runs 8 workers.", "The worker pool runs 16 workers.", "8 workers vs 16 workers"),
        (
            "The deploy script lives at /opt/deploy/run.sh.",
            "The deploy script is /usr/bin/deploy.sh.",
            "path",
        ),
    ],
)
def test_true_contradictions_are_found_with_both_values(a, b, reason):
    found = contradiction(a, b)
    assert found is not None
    assert reason in found.reason


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # the same port in two memories is agreement
        ("The billing database listens on port 5432.", "Billing DB: port 5432, user billing."),
        # two services with different ports are two subjects
        ("The billing service listens on port 8080.", "The auth service listens on port 8081."),
        ("We upgraded Python from 3.10 to 3.11.", "The service requires Python 3.11."),  # history
        ("We build with Node 18.", "We build with Node 18.17."),  # a version and its refinement
        ("Never commit secrets.", "Never commit generated files."),
        ("Redis listens on port 6379.", "Redis listens on port 6379 and its replica on port 6380."),
    ],
)
def test_false_cases_are_not_contradictions(a, b):
    assert contradiction(a, b) is None
    assert contradiction(b, a) is None


def test_claims_take_the_title_when_the_clause_names_nothing():
    found = claims("# Redis cache\n\nPort: 6380.\n")
    assert [(c.attribute, c.value, sorted(c.subject)) for c in found] == [
        ("port", "6380", ["cache", "redis"])
    ]


def test_km604_is_a_hint_on_the_claims_line_with_related_information():
    assert CATALOG["KM604"][0] == "hint" and CATALOG["KM603"][1].startswith("not valid UTF-8")
    mine = memory(
        "/memories/facts/db.md", "# Billing DB\n\nNotes.\nThe billing database listens on port 5432.\n"
    )
    other = ("/memories/facts/db-old.md", "# Billing DB\n\nBilling DB port is 5433.\n")
    same = ("/memories/facts/db-copy.md", "The billing database listens on port 5432.\n")
    auth = ("/memories/facts/auth.md", "The auth service listens on port 5433.\n")
    found = km604.check(mine, [other, same, auth, (mine.vpath, "port 1")])
    assert len(found) == 1
    f = found[0]
    assert (f.code, f.severity) == ("KM604", "hint")
    assert f.message == "may contradict /memories/facts/db-old.md: port 5432 vs 5433"
    assert f.span.line == 7  # 4 frontmatter lines, then the body's fourth line
    assert [r.vpath for r in f.related] == ["/memories/facts/db-old.md"]
    assert f.related[0].message == "states 5433"


def test_km604_says_nothing_for_the_same_port_or_other_services():
    mine = memory("/memories/facts/db.md", "The billing database listens on port 5432.\n")
    others = [
        ("/memories/facts/db2.md", "Billing DB: port 5432, user billing.\n"),
        ("/memories/facts/auth.md", "The auth service listens on port 5433.\n"),
    ]
    assert km604.check(mine, others) == []


def test_measured_precision_and_recall_on_the_labeled_set_are_at_least_0_9():
    """KM604 is published only because of these numbers: the script prints them, this keeps them true,
    for the whole set and for the pairs that say one fact in other words."""
    spec = importlib.util.spec_from_file_location("evaluate_contradictions", EVALUATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    lines = [json.loads(x) for x in (EVALUATE.parent / "pairs.jsonl").read_text().splitlines() if x.strip()]
    assert len(lines) >= 40
    assert abs(sum(p["contradiction"] for p in lines) * 2 - len(lines)) <= 4  # about half true
    score = module.evaluate()
    assert score.precision >= 0.9
    assert score.recall >= 0.9
    for batch in ("phrasing", "phrasing-held-out"):
        tp, fp, fn, _tn = score.batches[batch]
        assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.9, (batch, score.batches[batch])
    out = subprocess.run([sys.executable, str(EVALUATE)], capture_output=True, text=True, check=True).stdout
    assert f"precision {score.precision:.2f}, recall {score.recall:.2f}" in out
