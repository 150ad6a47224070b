import { test } from "node:test";
import assert from "node:assert/strict";
import {
  confirmDeleteArg, createToolInput, deleteToolInput, markReviewedArgs, newMemoryPath, newMemoryText, reflectArgs, searchArgs, sweepArgs, titleFromPath, uriFromArg,
} from "../src/args";
import type { MemoryEntry, Status } from "../src/protocol";

const mem = (p: string, category: string, status: Status, over: Partial<MemoryEntry> = {}): MemoryEntry => ({
  path: p, uri: "file:///s" + p.slice("/memories".length), category, workspace: null, visible: true, ageDays: 3, status, ...over,
});

test("command arguments have the SPEC shapes", () => {
  assert.deepEqual(searchArgs("  deploy  topology "), { query: "deploy  topology", limit: 20 });
  assert.deepEqual(searchArgs("x", 5), { query: "x", limit: 5 });
  assert.deepEqual(searchArgs(" category:episodic x ", 5, true), { query: "category:episodic x", limit: 5, workspace: "none" });
  assert.deepEqual(reflectArgs("/t/chat.jsonl"), { transcript: "/t/chat.jsonl" });
  assert.deepEqual(sweepArgs(true), { dryRun: true });
  assert.deepEqual(sweepArgs(false, "a1b2"), { dryRun: false, token: "a1b2" });
  assert.deepEqual(markReviewedArgs("file:///s/a.md"), { uri: "file:///s/a.md" });
  assert.deepEqual(createToolInput("/memories/facts/a.md", "t"), { command: "create", path: "/memories/facts/a.md", file_text: "t" });
});

test("a sweep deletes only with the dry run's token: without one it is a dry run", () => {
  assert.deepEqual(sweepArgs(false), { dryRun: true });
  assert.deepEqual(sweepArgs(false, null), { dryRun: true });
  assert.deepEqual(sweepArgs(false, ""), { dryRun: true });
  assert.deepEqual(sweepArgs(true, "a1b2"), { dryRun: true });
});

test("the delete quick fix's argument is checked, and deletes through the tool", () => {
  const uri = "file:///s/episodes/old.md";
  assert.deepEqual(confirmDeleteArg({ uri, path: "/memories/episodes/old.md" }), { uri, path: "/memories/episodes/old.md" });
  for (const bad of [undefined, null, "x", { uri }, { uri, path: 3 }, { uri, path: "/etc/passwd" }, { uri, path: "/memories/" }]) {
    assert.equal(confirmDeleteArg(bad), undefined, JSON.stringify(bad));
  }
  assert.deepEqual(deleteToolInput("/memories/episodes/old.md"), { command: "delete", path: "/memories/episodes/old.md", workspace: "none" });
});

test("new memory paths: .md added, hidden, traversal and backslashes refused", () => {
  assert.deepEqual(newMemoryPath("facts/build system"), { path: "/memories/facts/build system.md" });
  assert.deepEqual(newMemoryPath("/memories/prefs/tone.md"), { path: "/memories/prefs/tone.md" });
  assert.deepEqual(newMemoryPath(" a.MD "), { path: "/memories/a.MD" });
  for (const bad of ["", "  ", "../x", "facts/../../x", "a\\b", ".hidden/x", "facts/.x", "/etc/passwd", "a//b", "MEMORY", "a\u0000b", "facts/"]) {
    assert.ok("error" in newMemoryPath(bad), `refused: ${JSON.stringify(bad)}`);
  }
});

test("new memory text is frontmatter with the category and a heading", () => {
  assert.equal(newMemoryText("preference", "Tone"), "---\ncategory: preference\n---\n\n# Tone\n\n");
  assert.equal(titleFromPath("/memories/facts/build-system_notes.md"), "Build system notes");
  assert.equal(titleFromPath("/memories/-.md"), "New memory");
});

test("mark reviewed takes a URI string, the code lens's {uri} or a tree node; anything else means the active editor", () => {
  assert.equal(uriFromArg("file:///s/facts/a.md"), "file:///s/facts/a.md");
  assert.equal(uriFromArg({ uri: "file:///s/facts/a.md", extra: 1 }), "file:///s/facts/a.md");
  assert.equal(uriFromArg({ kind: "memory", memory: mem("/memories/facts/b.md", "project-fact", "stale") }), "file:///s/facts/b.md");
  for (const bad of [undefined, null, "", 42, {}, { uri: 3 }, { uri: "" }, { memory: null }, { memory: "x" }, []]) {
    assert.equal(uriFromArg(bad), undefined, JSON.stringify(bad));
  }
});
