"""Subjects match across phrasing: word order, "runs on … port N" against "listens on port N", a host
with and without its domain, a tool named for its role, a bare major version after what it versions.
Each case failed before the detector learned it (the staging pair is the one the issue names)."""

from __future__ import annotations

import time
from pathlib import Path

from kin_memory.consolidate.candidates import candidates
from kin_memory.findings import contradictions as km604
from kin_memory.findings.claims import claims
from kin_memory.findings.conflicts import contradiction
from kin_memory.store.memory import from_text

STAGING_A = "The staging Postgres database listens on port 5432 on db-staging.internal."
STAGING_B = "Staging Postgres runs on db-staging.internal, port 5433."


def memory(vpath: str, body: str):
    text = f"---\ncategory: project-fact\nworkspace: global\n---\n{body}"
    return from_text(Path("/store" + vpath[len("/memories") :]), vpath, text, time.time(), len(text))


def test_the_staging_pair_is_a_contradiction_in_km604():
    found = km604.check(memory("/memories/db.md", STAGING_A + "\n"), [("/memories/db2.md", STAGING_B + "\n")])
    assert [f.message for f in found] == ["may contradict /memories/db2.md: port 5432 vs 5433"]


def test_the_same_fact_said_two_ways_is_no_contradiction():
    assert (
        contradiction(STAGING_A, "Staging Postgres runs on db-staging.internal.example.com, port 5432.")
        is None
    )
    assert (
        contradiction("Redis for billing runs on port 6379.", "6379 is the port of the billing Redis.")
        is None
    )


def test_a_hostname_places_the_subject_it_does_not_name_it():
    # one host, two services: the shared host name is not a shared subject
    assert (
        contradiction(
            "Grafana listens on port 3000 on monitoring.internal.",
            "Prometheus listens on port 9090 on monitoring.internal.",
        )
        is None
    )
    # the same service on two hosts is two services
    assert (
        contradiction(
            "Redis runs on port 6379 on cache1.internal.", "Redis runs on port 6380 on cache2.internal."
        )
        is None
    )


def test_a_host_agrees_with_its_longer_name_and_not_with_another_host():
    assert (
        contradiction(
            "The API gateway runs on gw1.internal.", "gw1.internal.example.com hosts the API gateway."
        )
        is None
    )
    found = contradiction(
        "The SMTP relay is mail1.corp.example.com.", "Outgoing mail goes through the relay at mail2.corp."
    )
    assert found is not None and found.reason == "host mail1.corp.example.com vs mail2.corp"


def test_a_tool_is_a_choice_for_its_role_whatever_the_word_order():
    found = contradiction(
        "We use Yarn as the package manager for the web app.",
        "pnpm is what the web app uses as its package manager.",
    )
    assert found is not None and found.reason == "tool Yarn vs pnpm"
    assert contradiction("Our CI runs on GitHub Actions.", "CircleCI is what we use for CI.") is not None
    assert (
        contradiction("The frontend is linted with ESLint.", "Prettier formats the frontend.") is None
    )  # two roles
    assert (
        contradiction("Use npm or yarn, both work.", "We use pnpm.") is None
    )  # two tools of one role: no choice


def test_a_bare_major_version_after_its_name_is_a_version():
    found = contradiction(
        "Node 20 is the version the frontend builds with.", "The frontend builds with Node 18."
    )
    assert found is not None and found.reason == "version Node 20 vs Node 18"
    assert (
        contradiction("Node 20 is the version the frontend builds with.", "The backend runs on Node 18.")
        is None
    )
    assert [c.attribute for c in claims("Python 3.11 is required.")] == ["version"]  # dotted: one claim


def test_a_qualified_rule_meets_its_general_rule_and_not_another_qualifier():
    assert (
        contradiction(
            "Always squash commits when merging pull requests.", "Never squash commits when merging."
        )
        is not None
    )
    assert (
        contradiction(
            "Never squash commits on release branches.", "Always squash commits on feature branches."
        )
        is None
    )


def test_consolidate_pairs_a_general_rule_with_a_narrower_one():
    ms = [
        memory("/memories/a.md", "Always squash commits when merging pull requests.\n"),
        memory("/memories/b.md", "Never squash commits.\n"),
    ]
    found = [c for c in candidates(ms, time.time()) if c.kind == "contradiction"]
    assert [c.paths for c in found] == [("/memories/a.md", "/memories/b.md")]
