"""Point 15: KM602 finds every secret of a line across the common providers, and one masking function
shows each as its kind only. Every string here is fabricated (repeated blocks), none is a credential."""

from __future__ import annotations

from pathlib import Path

import pytest

from kin_memory.findings import content
from kin_memory.store.context import Context
from kin_memory.store.memory import from_text

# provider: (a fabricated secret, the prefix a mask keeps, a near miss that is no secret)
PROVIDERS = {
    "anthropic": ("sk-ant-api03-" + "Ab1_" * 8, "sk-ant-", "sk-ant-short1"),
    "openai legacy": ("sk-" + "Ab12" * 12, "sk-", "sk-learn-compatible-transformers"),
    "openai project": ("sk-proj-" + "Ab1-" * 10, "sk-proj-", "sk-proj-abc12"),
    "aws access key id": ("AKIA" + "ABCDEFGH23456789", "AKIA", "AKIA" + "ABCDEFGH2345678"),
    "aws temporary key id": ("ASIA" + "ABCDEFGH23456789", "ASIA", "asia" + "abcdefgh23456789"),
    "aws secret key in context": (
        "aws_secret_access_key = " + "Ab1/" * 10,
        "",
        "sha of the build: " + "Ab1/" * 10,  # the same 40 characters, with no name next to them
    ),
    "github classic": ("ghp_" + "Ab12" * 9, "ghp_", "ghp_" + "Ab12" * 5),
    "github oauth": ("gho_" + "Ab12" * 9, "gho_", "gho_" + "Ab12" * 5),
    "github server": ("ghs_" + "Ab12" * 9, "ghs_", "ghs-" + "Ab12" * 9),
    "github user": ("ghu_" + "Ab12" * 9, "ghu_", "ghx_" + "Ab12" * 9),
    "github fine-grained": ("github_pat_" + "Ab12" * 6 + "_" + "Cd34" * 5, "github_pat_", "github_pat_Ab12"),
    "gitlab": ("glpat-" + "Ab1-" * 5, "glpat-", "glpat-Ab1"),
    "slack bot": ("xoxb-" + "1234567890-" + "Abcd" * 4, "xoxb-", "xoxz-" + "1234567890-" + "Abcd" * 4),
    "slack user": ("xoxp-" + "1234567890-" + "Abcd" * 4, "xoxp-", "xoxp-abcdefghijklmnop"),
    "stripe live": ("sk_live_" + "Ab12" * 6, "sk_live_", "pk_live_" + "Ab12" * 6),
    "stripe restricted": ("rk_live_" + "Ab12" * 6, "rk_live_", "rk_live_Ab12"),
    "google api key": ("AIza" + "Ab1-" * 8 + "Ab1", "AIza", "AIza" + "Ab1" * 10),
    "private key": ("-----BEGIN OPENSSH PRIVATE KEY-----", "", "-----BEGIN PUBLIC KEY-----"),
    "pgp private key": ("-----BEGIN PGP PRIVATE KEY BLOCK-----", "", "-----BEGIN PGP PUBLIC KEY BLOCK-----"),
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0." + "Ab1-" * 5,
        "eyJ",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0",  # no signature segment
    ),
}


def _secret_part(text: str) -> str:
    return text.split("= ")[-1]


def km602(line: str) -> list[str]:
    """What KM602 flags in a memory holding this line (the public behaviour: the detector through the
    diagnostic), as the flagged text."""
    text = f"---\ncategory: preference\n---\n{line}\n"
    memory = from_text(Path("/s/m.md"), "/memories/m.md", text, 0.0, len(text))
    found = [f for f in content.check(memory, Context(root=Path("/s"))) if f.code == "KM602"]
    return [memory.lines[f.span.line][f.span.col : f.span.end_col] for f in found]


def mask_secrets(text: str) -> str:
    return content.mask_secrets(text)  # looked up at call time: the detector tests run without it


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_secret_detector_finds_the_provider(provider: str) -> None:
    secret, _, _ = PROVIDERS[provider]
    assert km602(f"note: {secret} here") == [_secret_part(secret)], provider


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_secret_detector_ignores_the_near_miss(provider: str) -> None:
    _, _, near_miss = PROVIDERS[provider]
    assert km602(f"note: {near_miss} here") == [], provider


@pytest.mark.parametrize("provider", sorted(p for p in PROVIDERS if "private key" not in p))
def test_mask_shows_the_kind_never_the_secret(provider: str) -> None:
    secret, keep, near_miss = PROVIDERS[provider]
    masked = mask_secrets(f"note: {secret} and {near_miss}.")
    assert _secret_part(secret) not in masked.replace(near_miss, "")
    assert (f"{keep}…****" if keep else "= ****") in masked
    assert near_miss in masked  # what is no secret is shown as it is
    assert mask_secrets(masked) == masked


def test_mask_covers_a_private_key_block_line_for_line() -> None:
    body = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY\n" * 3
    text = f"before\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\nafter\n"
    masked = mask_secrets(text)
    assert "QUJD" not in masked and masked.count("\n") == text.count("\n")
    assert masked.startswith("before\n-----BEGIN RSA PRIVATE KEY-----\n****\n")
    assert masked.endswith("-----END RSA PRIVATE KEY-----\nafter\n")
    cut = mask_secrets(f"-----BEGIN PRIVATE KEY-----\n{body}")  # a block cut before its END line
    assert "QUJD" not in cut


def test_mask_leaves_text_without_secrets_alone() -> None:
    text = "The gateway routes TLS; the token bucket refills at 10/s. password rules: 12 chars."
    assert mask_secrets(text) == text


def test_every_secret_of_a_line_is_reported() -> None:
    secrets = [PROVIDERS[p][0] for p in ("anthropic", "github classic", "stripe live", "aws access key id")]
    assert km602("keys: " + " ".join(secrets)) == secrets
    text = "---\ncategory: preference\n---\nkeys: " + " ".join(secrets) + "\n"
    memory = from_text(Path("/s/m.md"), "/memories/m.md", text, 0.0, len(text))
    labels = [f.message.split("(")[1].split(")")[0] for f in content.check(memory, Context(root=Path("/s")))]
    assert labels == ["Anthropic API key", "GitHub token", "Stripe secret key", "AWS access key id"]


def test_a_generic_assignment_is_named_by_its_provider() -> None:
    found = content.find_secrets("token = " + PROVIDERS["github classic"][0])
    assert [m.label for m in found] == ["GitHub token"]
    assigned = content.find_secrets("password: hunter2hunter2hunter22")
    assert [m.label for m in assigned] == ["credential assignment"]


@pytest.mark.parametrize(
    "literals",
    [
        content.TRIGGERS,
        ("ab", "abc", "abd", "b"),
        ("a.b", "a+b", "(x", "x)"),
        ("same", "same", "sa"),
        ("A_1", "_", "Zz", "zZ", "9", "é_", "É"),
    ],
)
def test_the_gated_literals_are_found_exactly_where_one_occurs(literals: tuple[str, ...]) -> None:
    gated, plain = content.gated_literals(literals)
    texts = [*literals, *(f"xx {a}{b} yy" for a in literals for b in literals), "nothing here", "a b c ( )"]
    texts += (
        [lit[:-1] for lit in literals] + [lit.lower() for lit in literals] + [lit.upper() for lit in literals]
    )
    for text in texts:
        expected = any(lit in text for lit in literals)
        assert content.holds_literal(text, gated, plain) == expected, text


def test_every_trigger_is_searched_for_under_a_gate_it_holds() -> None:
    gated, plain = content.gated_literals(content.TRIGGERS)
    kept = [lit for _, group in gated for lit in group] + list(plain)
    for gate, group in gated:
        assert all(gate in lit for lit in group)
    # a trigger left out is found by a shorter one it holds
    assert all(any(k in lit for k in kept) for lit in content.TRIGGERS)


def test_the_prefilter_lets_through_every_text_a_pattern_would_match() -> None:
    for pattern in content.SECRET_PATTERNS:
        for trigger in (*pattern.triggers, *pattern.words):
            assert content._may_hold_secrets(f"plain words {trigger.upper()} and {trigger} here")
    assert not content._may_hold_secrets("plain words about a deploy on Tuesday")
