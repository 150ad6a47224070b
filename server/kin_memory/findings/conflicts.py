"""Contradictions: two memories about the same subject that disagree on a value.

Two claims (see claims.py) contradict when
- they have the same attribute (`port`, `host`, `version`, `path`, `url`, `count:<noun>`, or the same
  rule: verb and object),
- they are about the same subject: for values, the subjects' word sets overlap by at least half
  (Jaccard ≥ 0.5: "billing database" and "Billing DB" agree, "billing service" and "auth service" do
  not); a rule's subject is its verb and object,
- and their values differ: another port, another host, a version that is not a prefix of the other
  (`18` and `18.17` agree), the opposite polarity of a rule (`always` / `never`).

A memory that also states the other's value for the same subject (it lists both ports) is no
contradiction. The detector's precision and recall on a labeled set are printed by
`scripts/contradictions/evaluate.py`; KM604 is published because that precision is at least 0.8.
"""

from __future__ import annotations

from dataclasses import dataclass

from .claims import Claim, claims

SAME_SUBJECT = 0.5
UNPLACED = ("host", "url", "path")  # values that are a place themselves: the hosts named say nothing more


@dataclass(frozen=True)
class Contradiction:
    mine: Claim
    theirs: Claim

    @property
    def reason(self) -> str:
        """ "port 5432 vs 5433", "always squash vs never squash"."""
        kind = self.mine.attribute.split(":")[0]
        if kind == "rule":
            return f"{self.mine.shown} vs {self.theirs.shown}"
        if kind == "count":
            return f"{self.mine.shown} vs {self.theirs.shown}"
        return f"{kind} {self.mine.shown} vs {self.theirs.shown}"


def same_subject(a: Claim, b: Claim) -> bool:
    if a.attribute != b.attribute:
        return False
    if a.attribute.startswith("rule:"):
        # The attribute is the verb and its object; a rule qualified one way ("on release branches")
        # and one qualified another ("on feature branches") are two rules, a general one and a
        # narrower one are the same.
        return a.subject <= b.subject or b.subject <= a.subject
    if a.attribute not in UNPLACED and a.where and b.where and not a.where & b.where:
        return False  # the same kind of thing on two hosts: two things
    if a.attribute.startswith("tool:") and not a.subject and not b.subject:
        return True  # "our CI runs on X": the project's choice
    if not a.subject or not b.subject:
        return False
    return len(a.subject & b.subject) / len(a.subject | b.subject) >= SAME_SUBJECT


def disagree(a: Claim, b: Claim) -> bool:
    if a.value == b.value:
        return False
    if a.attribute in ("version", "host"):
        # A version agrees with its refinement (18, 18.17); a host with its longer name (gw1.internal,
        # gw1.internal.example.com).
        x, y = a.value.split("."), b.value.split(".")
        n = min(len(x), len(y))
        return x[:n] != y[:n]
    return True


def between(mine: list[Claim], theirs: list[Claim]) -> Contradiction | None:
    """The first contradiction between two memories' claims, or None."""
    for a in mine:
        for b in theirs:
            if (
                same_subject(a, b)
                and disagree(a, b)
                and not _also_states(theirs, a)
                and not _also_states(mine, b)
            ):
                return Contradiction(a, b)
    return None


def _also_states(claims_of: list[Claim], claim: Claim) -> bool:
    return any(same_subject(c, claim) and not disagree(c, claim) for c in claims_of)


def contradiction(body_a: str, body_b: str) -> Contradiction | None:
    return between(claims(body_a), claims(body_b))
