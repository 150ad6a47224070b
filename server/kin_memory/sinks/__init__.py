"""Sinks: one small module per renderer that untrusted text reaches.

Memory text, file names and model output are untrusted. Each renderer interprets different characters,
so each gets its own neutraliser: `markdown` (hover and completion documentation), `terminal` (every CLI
text output) and `prompt` (names listed to the agent). `controls` holds the characters none of them lets
through raw and the one visible escape they all use, so a hostile name reads the same everywhere.
"""
