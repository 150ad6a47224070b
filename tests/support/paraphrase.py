"""A small store where one question is asked in other words than its answer: the semantic layer's tests.

`QUERY` shares no content word with the memory that answers it (`ANSWER`): ranked by words, nothing
matches; ranked by meaning too, the answer comes first. A memory of another workspace says much the same
(`FOREIGN`): it must never be returned from `WS`. `HOVERED` is a memory about the answer's subject, with
a last paragraph that names nothing of it: hovered there, words relate nothing, while the memory's own
vector is close to the answer's.
"""

from __future__ import annotations

from pathlib import Path

from support.memfiles import memory, write

WS = "/srv/repos/app"
OTHER = "/srv/repos/other"
QUERY = "how can the interface be shown in Spanish"
ANSWER = "/memories/facts/locales.md"
FOREIGN = "/memories/facts/other-locales.md"
HOVERED = "/memories/notes/new-language.md"
HOVER_LINE = 8  # "Ask Maria before Friday.": no word of it is in another memory (0-based line)


def build(root: Path) -> None:
    write(
        root,
        "facts/locales.md",
        memory(
            "project-fact",
            "# Translations\n\nUI strings live in messages/*.json. To add a language, add its locale code "
            "to i18n.config.ts and run the extract script.\n",
            WS,
        ),
    )
    write(
        root,
        "facts/db.md",
        memory(
            "project-fact", "# Database access\n\nConnect to the staging postgres through pgbouncer.\n", WS
        ),
    )
    write(
        root,
        "facts/deploy.md",
        memory("project-fact", "# Deploys\n\nProduction deploys go through the release pipeline.\n", WS),
    )
    write(
        root,
        "facts/other-locales.md",
        memory(
            "project-fact",
            "# Translations\n\nUI strings live in locales/*.po; to add a language, add its locale code and "
            "run the extract script.\n",
            OTHER,
        ),
    )
    write(
        root,
        "notes/new-language.md",
        memory(
            "episodic",
            "# Internationalisation\n\nSupporting another locale means extracting the UI strings and "
            "registering the locale in the i18n config.\n\nAsk Maria before Friday.\n",
            WS,
        ),
    )
