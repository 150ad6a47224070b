"""Issue 34: the newest turns of a long session always reach the model. A 10 MB Claude Code session full of
screenshots used to be read from its start (8 MiB), and the character cap then kept the end of THAT, so
the final decision and the last tool turns never reached the model and nobody was told. Now the file is
read from its end, images become placeholders, the oldest turns are the ones left out, and every cut is
counted in a sentence the command line prints."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_models import FakeModel, openai_stop
from reflect_helpers import KEY, KEY_ENV

from kin_memory.reflect import transcript
from kin_memory.reflect.transcript import MAX_CHARS, MAX_READ, parse, read

DECISION = "Final decision: keep three retries and move the checkout test behind the feature flag."
LAST_TOOL_TURNS = 26
BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{200,}")


def _record(role: str, content: object, n: int) -> str:
    return json.dumps({"type": role, "uuid": f"r{n}", "timestamp": f"2026-12-03T10:{n // 60:02d}:{n % 60:02d}Z",
                       "message": {"role": role, "content": content}})  # fmt: skip


def write_big_session(path: Path) -> Path:
    """A Claude Code session over 10 MB: a request, 30 screenshot turns (about 350 KB of base64 each), then
    26 small tool turns and the final decision, as the reported session had them."""
    screenshot = base64.b64encode(os.urandom(350 * 1024)).decode()
    lines = [_record("user", "The checkout test is flaky on CI; find out why and decide what to do.", 0)]
    n = 1
    for i in range(30):
        call = [
            {"type": "tool_use", "id": f"shot{i}", "name": "Screenshot", "input": {"page": f"/checkout/{i}"}}
        ]
        result = [{"type": "tool_result", "tool_use_id": f"shot{i}", "content": [
            {"type": "text", "text": f"screenshot {i} of the checkout page"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": screenshot}},
        ]}]  # fmt: skip
        lines += [_record("assistant", call, n), _record("user", result, n + 1)]
        n += 2
    for i in range(LAST_TOOL_TURNS):
        call = [
            {"type": "tool_use", "id": f"run{i}", "name": "Bash", "input": {"command": f"pytest -k run{i}"}}
        ]
        result = [{"type": "tool_result", "tool_use_id": f"run{i}", "content": f"run {i}: 1 passed"}]
        lines += [_record("assistant", call, n), _record("user", result, n + 1)]
        n += 2
    lines.append(_record("assistant", [{"type": "text", "text": DECISION}], n))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert path.stat().st_size > 10 * 1024 * 1024
    return path


def test_big_session_with_screenshots_reaches_its_final_decision(tmp_path: Path, monkeypatch) -> None:
    session = write_big_session(tmp_path / "session.jsonl")
    size = session.stat().st_size
    read_bytes = 0
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        nonlocal read_bytes
        chunk = real_read(fd, n)
        read_bytes += len(chunk)
        return chunk

    monkeypatch.setattr(os, "read", counting)
    t = read(session)
    assert read_bytes <= MAX_READ  # the end of the file, not all of it
    said = t.text.split("\n\n")
    assert said[-1] == f"assistant: {DECISION}"
    for i in range(LAST_TOOL_TURNS):
        assert f"tool: [tool result: run {i}: 1 passed]" in said
    assert not BASE64_RUN.search(t.text) and "[image: png, 350 KB]" in t.text
    assert said[0].startswith("[… the start of the session was not read")
    assert "The checkout test is flaky" not in t.text  # the first request was in the part not read
    cuts = t.cuts
    assert t.truncated and cuts.file_size == size
    assert size - MAX_READ <= cuts.bytes_not_read < size - MAX_READ + 400 * 1024  # up to the first whole line
    assert cuts.images_replaced == t.text.count("[image: png, 350 KB]") > 0
    sentence = cuts.sentence()
    assert sentence.startswith("The transcript was shortened for the model: the first ")
    assert f"of the {size // (1024 * 1024)} MB file were not read" in sentence
    assert f"{cuts.images_replaced} images were replaced by a placeholder" in sentence


def test_over_the_character_cap_the_oldest_turns_are_left_out() -> None:
    lines = [json.dumps({"role": "user", "content": f"turn {i:04d} " + "x" * 990}) for i in range(200)]
    lines.append(json.dumps({"role": "assistant", "content": DECISION}))
    t = parse("\n".join(lines))
    assert t.messages == 201 and len(t.text) <= MAX_CHARS + 100
    said = t.text.split("\n\n")
    assert said[-1] == f"assistant: {DECISION}" and said[-2].startswith("user: turn 0199 ")
    kept = [s for s in said if s.startswith("user: turn ")]
    dropped = 200 - len(kept)
    assert kept[0].startswith(f"user: turn {dropped:04d} ")  # a contiguous run of the newest
    assert t.cuts.turns_dropped == dropped > 0 and t.truncated
    assert said[0] == f"[… {dropped} earlier turns left out; the latest turns follow …]"
    assert t.cuts.sentence() == (
        f"The transcript was shortened for the model: the {dropped} oldest turns were left out."
    )


def test_a_newest_turn_alone_over_the_cap_keeps_its_end() -> None:
    long = "a" * MAX_CHARS + " the conclusion"
    t = parse("\n".join([json.dumps({"role": "user", "content": "hello"}),
                         json.dumps({"role": "assistant", "content": long})]))  # fmt: skip
    assert t.text.endswith("the conclusion") and t.cuts.turns_dropped == 1
    assert t.cuts.chars_dropped == len("assistant: " + long) - MAX_CHARS


def test_plain_text_keeps_its_end_and_counts_the_cut() -> None:
    t = parse("early words\n" + "y" * MAX_CHARS + "\nthe last line")
    assert t.format == "text" and t.text.endswith("the last line") and "early words" not in t.text
    assert t.cuts.chars_dropped == len("early words\n") + len("\nthe last line")
    assert "characters were left out" in t.cuts.sentence()


def test_the_tail_read_still_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(transcript.TranscriptError) as exc:
        read(fifo, "s.jsonl")
    assert str(exc.value) == "transcript is not a regular file (a FIFO), not read: s.jsonl"


def test_reflect_latest_sends_the_final_decision_to_the_model(
    tmp_path: Path, store: Path, workspace: str
) -> None:
    home = tmp_path / "home"
    folder = re.sub(r"[/.]", "-", workspace)
    write_big_session(home / ".claude" / "projects" / folder / "0b9c-session.jsonl")
    env = {
        k: v for k, v in os.environ.items() if k not in ("KIN_MEMORY_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
    }
    env.update(HOME=str(home), **{KEY_ENV: KEY})
    with FakeModel([openai_stop("Nothing durable.")]) as fake:
        out = subprocess.run(
            [sys.executable, "-m", "kin_memory", "reflect", "--latest", "--root", str(store), "--provider",
             "openai", "--model", "m", "--base-url", fake.url + "/v1", "--api-key-env", KEY_ENV],
            capture_output=True, text=True, timeout=120, cwd=workspace, env=env,
        )  # fmt: skip
        bodies = [json.dumps(r.body) for r in fake.requests]
    assert out.returncode == 0, out.stderr
    assert len(bodies) == 1 and json.dumps(DECISION)[1:-1] in bodies[0]
    assert json.dumps("run 25: 1 passed")[1:-1] in bodies[0] and not BASE64_RUN.search(bodies[0])
    assert "reading the latest Claude Code session: " in out.stderr and "0b9c-session.jsonl" in out.stderr
    assert "The transcript was shortened for the model: the first " in out.stderr
    assert "images were replaced by a placeholder" in out.stderr
