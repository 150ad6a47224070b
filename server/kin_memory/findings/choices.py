"""Values a memory states by naming them: which tool fills a role ("we use pnpm", "CircleCI is what we
use for CI") and a major version written after the thing it versions ("Java 17", "Node 20").

A tool's role comes from the table below, not from the sentence: "pnpm is what the web app uses as its
package manager" and "We use Yarn for the web app" are both `tool:package-manager` claims, whatever the
word order. A clause naming two tools of one role ("npm or yarn both work") states no choice.
"""

from __future__ import annotations

import re

# tool (as written, lower case) → the role it fills. One role per tool: where a tool fills two (ruff
# lints and formats), the role people name it for.
ROLES: dict[str, str] = {
    **dict.fromkeys(
        ("npm", "yarn", "pnpm", "bun", "pip", "poetry", "uv", "pipenv", "conda", "pdm"), "package-manager"
    ),  # fmt: skip
    **dict.fromkeys(
        (
            "github actions",
            "circleci",
            "circle ci",
            "gitlab ci",
            "jenkins",
            "travis",
            "travis ci",
            "buildkite",
            "azure pipelines",
            "teamcity",
        ),
        "ci",
    ),  # fmt: skip
    **dict.fromkeys(("jest", "vitest", "mocha", "pytest", "unittest", "jasmine"), "test-runner"),
    **dict.fromkeys(("eslint", "ruff", "flake8", "pylint", "tslint", "biome"), "linter"),
    **dict.fromkeys(("prettier", "black", "yapf", "autopep8"), "formatter"),
    **dict.fromkeys(("webpack", "vite", "esbuild", "rollup", "parcel", "turbopack"), "bundler"),
    **dict.fromkeys(("mypy", "pyright", "pytype"), "type-checker"),
    **dict.fromkeys(("terraform", "pulumi", "cloudformation"), "infrastructure"),
}
# Words that only name a role or a way of choosing: not what the choice is for.
ROLE_WORDS = frozenset(
    "package packages manager ci continuous integration test tests runner framework lint linter linting "
    "format formatter formatting bundle bundler type checker checking infrastructure tool tooling install "
    "what which".split()
)
_TOOL = re.compile(
    r"\b(" + "|".join(sorted((re.escape(t) for t in ROLES), key=len, reverse=True)) + r")\b", re.I
)
# Things whose bare major number is a version: "Java 17", "Node 20", "Postgres 15".
VERSIONED = (
    "java jdk node nodejs python ruby go golang rust php perl dotnet kotlin scala swift typescript "
    "postgres postgresql mysql mariadb redis kafka elasticsearch mongodb ubuntu debian alpine gradle "
    "maven react angular vue django rails terraform kubernetes helm docker electron gcc clang".split()
)
_NAMED_VERSION = re.compile(r"\b(" + "|".join(VERSIONED) + r")\s+v?(\d{1,3})\b(?!\.\d)", re.I)


def tools(clause: str) -> list[tuple[str, str, str, tuple[int, int]]]:
    """(attribute, value, shown, span) for the one tool per role the clause names."""
    by_role: dict[str, list[re.Match[str]]] = {}
    for m in _TOOL.finditer(clause):
        by_role.setdefault(ROLES[m.group(1).lower()], []).append(m)
    out = []
    for role, found in by_role.items():
        names = {" ".join(m.group(1).lower().split()).replace("circle ci", "circleci") for m in found}
        if len(names) == 1:
            m = found[0]
            out.append((f"tool:{role}", names.pop(), m.group(1), m.span()))
    return out


def named_versions(clause: str) -> list[tuple[str, str, str, tuple[int, int]]]:
    """("version", major, shown, span of the number) for "Java 17": the name stays in the subject."""
    return [("version", m.group(2), m.group(0), m.span(2)) for m in _NAMED_VERSION.finditer(clause)]
