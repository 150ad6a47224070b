import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import {
  countStatuses, createToolInput, formatAge, groupByCategory, isMemoryPath, isUnderRoot, markReviewedArgs, memoryBadge,
  memoryDirFromToml, newMemoryPath, newMemoryText, plainSnippet, reflectArgs, resolveStoreRoot, searchArgs, searchItems,
  statusBarText, sweepArgs, sweepSummary, titleFromPath, uriFromArg, type MemoryEntry,
} from "../src/shape";

const mem = (p: string, category: string, status: string, over: Partial<MemoryEntry> = {}): MemoryEntry => ({
  path: p, uri: "file:///s" + p.slice("/memories".length), category, workspace: null, visible: true, ageDays: 3, status, ...over,
});

test("command arguments have the SPEC shapes", () => {
  assert.deepEqual(searchArgs("  deploy  topology "), { query: "deploy  topology", limit: 20 });
  assert.deepEqual(searchArgs("x", 5), { query: "x", limit: 5 });
  assert.deepEqual(reflectArgs("/t/chat.jsonl"), { transcript: "/t/chat.jsonl", apply: true });
  assert.deepEqual(sweepArgs(true), { dryRun: true });
  assert.deepEqual(sweepArgs(false), { dryRun: false });
  assert.deepEqual(markReviewedArgs("file:///s/a.md"), { uri: "file:///s/a.md" });
  assert.deepEqual(createToolInput("/memories/facts/a.md", "t"), { command: "create", path: "/memories/facts/a.md", file_text: "t" });
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

test("search results become plain one-line items in the server's order", () => {
  const items = searchItems([
    { path: "/memories/facts/deploy.md", uri: "file:///s/facts/deploy.md", category: "project-fact", title: "Deploy", snippet: "line one\nline\ttwo", score: 2 },
    { path: "/memories/episodes/x.md", uri: "file:///s/episodes/x.md", category: "episodic", title: "", snippet: null, score: 1 },
  ]);
  assert.deepEqual(items, [
    { label: "Deploy", description: "project-fact · /memories/facts/deploy.md", detail: "line one line two", uri: "file:///s/facts/deploy.md" },
    { label: "x.md", description: "episodic · /memories/episodes/x.md", detail: "", uri: "file:///s/episodes/x.md" },
  ]);
  assert.equal(plainSnippet("x".repeat(500)).length, 160);
  assert.equal(plainSnippet("a\u0000\u001bb"), "a b");
});

test("badges: lifecycle status, visibility and age", () => {
  assert.deepEqual(memoryBadge(mem("/memories/a.md", "project-fact", "stale", { ageDays: 200 })),
    { description: "stale · global · 7 mo", icon: "warning", contextValue: "memory.stale" });
  assert.deepEqual(memoryBadge(mem("/memories/b.md", "episodic", "expiring", { workspace: "/src/kin", ageDays: 38 })),
    { description: "expiring · this workspace · 38 d", icon: "watch", contextValue: "memory.expiring" });
  assert.deepEqual(memoryBadge(mem("/memories/c.md", "episodic", "expired", { visible: false, workspace: "/gone" })).description,
    "expired · other workspace · 3 d");
  assert.equal(memoryBadge(mem("/memories/d.md", "preference", "ok", { visible: false, workspace: "/x" })).icon, "eye-closed");
  assert.equal(memoryBadge(mem("/memories/e.md", "session", "ok", { ageDays: 0.5 })).description, "global · 12 h");
  assert.equal(formatAge(0.001), "just now");
  assert.equal(formatAge(Number.NaN), "");
});

test("grouping keeps the canonical category order, unknown categories last", () => {
  const groups = groupByCategory([
    mem("/memories/z.md", "session", "ok"), mem("/memories/b.md", "project-fact", "ok"), mem("/memories/weird.md", "zeta", "ok"),
    mem("/memories/a.md", "project-fact", "stale"), mem("/memories/p.md", "preference", "ok"), mem("/memories/e.md", "episodic", "ok"),
  ]);
  assert.deepEqual(groups.map((g) => g.category), ["project-fact", "preference", "episodic", "session", "zeta"]);
  assert.deepEqual(groups[0].memories.map((m) => m.path), ["/memories/a.md", "/memories/b.md"]);
});

test("status counts and text", () => {
  const c = countStatuses([mem("/memories/a", "project-fact", "stale"), mem("/memories/b", "episodic", "expiring"),
    mem("/memories/c", "episodic", "expiring"), mem("/memories/d", "session", "expired"), mem("/memories/e", "preference", "ok")]);
  assert.deepEqual(c, { total: 5, stale: 1, expiring: 2, expired: 1 });
  assert.equal(statusBarText(c).text, "$(book) 1 stale · 2 expiring · 1 expired");
  assert.equal(statusBarText({ total: 0, stale: 0, expiring: 0, expired: 0 }).text, "$(book) 0 stale · 0 expiring");
  assert.match(statusBarText(c).tooltip, /5 memories/);
});

test("sweep summaries", () => {
  assert.equal(sweepSummary([], 4, true), "Nothing to sweep: no expired memories (4 kept).");
  assert.equal(sweepSummary(["/memories/a.md"], 3, true), "1 expired memory would be deleted (3 kept).");
  assert.equal(sweepSummary(["/memories/a.md", "/memories/b.md"], 3, false), "Swept 2 expired memories (3 kept).");
});

test("the store root follows the server's order: env, setting, global settings.toml, default", () => {
  const home = "/home/u";
  const toml = '# c\nmemory_enabled = true\nmemory_dir = "~/notes/mem"  # mine\n[other]\nmemory_dir = "/ignored"\n';
  assert.equal(resolveStoreRoot({ setting: "/set", env: "/env", home, globalSettings: toml }), "/env");
  assert.equal(resolveStoreRoot({ setting: "/set", env: undefined, home, globalSettings: toml }), "/set");
  assert.equal(resolveStoreRoot({ setting: "", env: "", home, globalSettings: toml }), path.join(home, "notes", "mem"));
  assert.equal(resolveStoreRoot({ setting: null, env: undefined, home, globalSettings: undefined }), path.join(home, ".kin", "memory"));
  assert.equal(memoryDirFromToml("[t]\nmemory_dir = '/x'\n"), undefined);
  assert.equal(memoryDirFromToml("memory_dir = '/lit'\n"), "/lit");
  assert.equal(memoryDirFromToml('memory_dir = "/a \\"q\\""'), '/a "q"');
});

test("memory paths: below the root, *.md, no hidden component", () => {
  const root = "/home/u/.kin/memory";
  assert.equal(isMemoryPath("/home/u/.kin/memory/facts/a.md", root), true);
  assert.equal(isMemoryPath("/home/u/.kin/memory/MEMORY.md", root), true);
  assert.equal(isMemoryPath("/home/u/.kin/memory/.index/a.md", root), false);
  assert.equal(isMemoryPath("/home/u/.kin/memory/a.txt", root), false);
  assert.equal(isMemoryPath("/home/u/.kin/memory-x/a.md", root), false);
  assert.equal(isUnderRoot(root, root), false);
  assert.equal(isUnderRoot("/home/u/.kin", root), false);
});

test("mark reviewed takes a URI string, the code lens's {uri} or a tree node; anything else means the active editor", () => {
  assert.equal(uriFromArg("file:///s/facts/a.md"), "file:///s/facts/a.md");
  assert.equal(uriFromArg({ uri: "file:///s/facts/a.md", extra: 1 }), "file:///s/facts/a.md");
  assert.equal(uriFromArg({ kind: "memory", memory: mem("/memories/facts/b.md", "project-fact", "stale") }), "file:///s/facts/b.md");
  for (const bad of [undefined, null, "", 42, {}, { uri: 3 }, { uri: "" }, { memory: null }, { memory: "x" }, []]) {
    assert.equal(uriFromArg(bad), undefined, JSON.stringify(bad));
  }
});
