import { test } from "node:test";
import assert from "node:assert/strict";
import {
  countStatuses, formatAge, groupByCategory, memoryBadge, plainSnippet, previewSummary, searchItems, printablePath, statusBarText, sweepQuestion, sweepSummary, sweptReport,
  changeLabel, conflictSummary, applyReport, proposalTitle, reviewNotice, candidateLabel, passName,
  versionItems, changeDescription, changeSentence, sessionPick, formatSize, changesBadgeTooltip, filterMemories, filterFrom, filterItems, describeFilter, isFiltering,
} from "../src/present";
import type { MemoryEntry, Status } from "../src/protocol";

const mem = (p: string, category: string, status: Status, over: Partial<MemoryEntry> = {}): MemoryEntry => ({
  path: p, uri: "file:///s" + p.slice("/memories".length), category, workspace: null, visible: true, ageDays: 3, status, ...over,
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
    { description: "stale · 7 mo · global", icon: "warning", contextValue: "memory.stale" });
  assert.deepEqual(memoryBadge(mem("/memories/b.md", "episodic", "expiring", { workspace: "/src/kin", ageDays: 38 })),
    { description: "expiring · 38 d · this workspace", icon: "watch", contextValue: "memory.expiring" });
  assert.deepEqual(memoryBadge(mem("/memories/c.md", "episodic", "expired", { visible: false, workspace: "/gone" })).description,
    "expired · other workspace · 3 d");
  assert.equal(memoryBadge(mem("/memories/d.md", "preference", "ok", { visible: false, workspace: "/x" })).icon, "eye-closed");
  assert.equal(memoryBadge(mem("/memories/e.md", "session", "ok", { ageDays: 0.5 })).description, "12 h · global");
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
  assert.equal(sweepSummary([], 3, false), "Swept nothing (3 kept).");
});

test("the sweep question counts and lists the files, a name's control characters escaped", () => {
  const q = sweepQuestion(["/memories/a.md", "/memories/b\nfake line.md"], 1);
  assert.equal(q.message, "Delete 2 expired memories?");
  assert.equal(q.detail, "• /memories/a.md\n• /memories/b\\x0afake line.md\n\n1 other memory is kept. History keeps what is deleted: Revert in the Changes section of the Kin Memory view brings a memory back.");
  const many = sweepQuestion(Array.from({ length: 15 }, (_, i) => `/memories/e${i}.md`), 0, 12);
  assert.match(many.detail, /…and 3 more\n/);
  assert.equal(printablePath("/memories/x\u001b]52;c;QQ==\u0007.md"), "/memories/x\\x1b]52;c;QQ==\\x07.md");
  assert.equal(sweptReport(["/memories/a.md"], 4, ["/memories/b.md"]),
    "Swept 1 expired memory (4 kept). 1 listed memory changed since the list was shown and was kept: /memories/b.md.");
});

test("the preview toast says which cap cut how many lines; the server sends numbers, the editor the words", () => {
  const base = { lines: 200, bytes: 9000, truncated: true };
  assert.equal(previewSummary({ ...base, cut: 35, cutReason: "lines" }),
    "Kin Memory prompt block: 200 lines, 9000 bytes. 35 lines past the 200-line cap are not inlined.");
  assert.equal(previewSummary({ ...base, lines: 120, bytes: 25600, cut: 1, cutReason: "bytes" }),
    "Kin Memory prompt block: 120 lines, 25600 bytes. 1 line past the 25 KB cap is not inlined.");
  assert.equal(previewSummary({ lines: 12, bytes: 340, truncated: false, cut: 0, cutReason: null }), "Kin Memory prompt block: 12 lines, 340 bytes.");
  // Truncated without a count (a server that does not say how much): still says the prompt misses the rest.
  assert.equal(previewSummary({ ...base, cut: 0, cutReason: null }),
    "Kin Memory prompt block: 200 lines, 9000 bytes — truncated at the cap: the rest is not in the prompt.");
});

test("proposed changes read as one line each, and conflicts as a sentence", () => {
  assert.equal(changeLabel({ kind: "create", path: "/memories/a.md", newPath: null }), "create /memories/a.md");
  assert.equal(changeLabel({ kind: "rename", path: "/memories/a.md", newPath: "/memories/b.md" }), "rename /memories/a.md → /memories/b.md");
  assert.equal(conflictSummary([]), "");
  assert.equal(conflictSummary([{ path: "/memories/a.md", reason: "the file changed since the proposal was made" }]),
    " Not applied: /memories/a.md (the file changed since the proposal was made).");
  // A path or reason from the store cannot fake a line in a message.
  assert.equal(changeLabel({ kind: "edit", path: "/memories/a\nb.md", newPath: null }), "edit /memories/a\\x0ab.md");
  assert.equal(conflictSummary([{ path: "/memories/a\n.md", reason: "changed\nmeanwhile" }]), " Not applied: /memories/a\\x0a.md (changed meanwhile).");
});

test("the review: a title per proposal, a question counting and listing its changes, a report after applying", () => {
  const changes = [
    { kind: "create" as const, path: "/memories/prefs/pr-titles.md", newPath: null },
    { kind: "edit" as const, path: "/memories/prefs/review-style.md", newPath: null },
  ];
  assert.equal(proposalTitle({ id: "5578872f40910940" }), "Kin Memory proposal 5578872f");
  const q = reviewNotice({ summary: "Proposed: 1 created,\n1 edited.", changes });
  assert.equal(q, "Kin Memory: the reflection proposes 2 changes; the diffs are open. Nothing is written until you choose. "
    + "Proposed: 1 created, 1 edited. • create /memories/prefs/pr-titles.md • edit /memories/prefs/review-style.md");
  const many = reviewNotice({ summary: "", changes: Array.from({ length: 15 }, (_, i) => ({ kind: "delete" as const, path: `/memories/${i}.md`, newPath: null })) }, 12);
  assert.match(many, /choose\. • delete \/memories\/0\.md .*• delete \/memories\/11\.md …and 3 more$/);
  // A notification shows at most 1000 characters: a long proposal is cut there, visibly.
  const long = reviewNotice({ summary: "x".repeat(300), changes: Array.from({ length: 9 }, (_, i) => ({ kind: "edit" as const, path: `/memories/${"d".repeat(150)}/${i}.md`, newPath: null })) });
  assert.ok(long.length === 1000 && long.endsWith("…"), `${long.length}`);
  assert.equal(applyReport(2, 2, []), "Kin Memory: applied 2 of 2 changes.");
  assert.equal(applyReport(1, 1, [], 3), "Kin Memory: applied 1 of 3 changes; 2 left out.");
  assert.equal(applyReport(0, 2, [{ path: "/memories/a.md", reason: "it changed" }], 3),
    "Kin Memory: applied 0 of 3 changes; 1 left out. Not applied: /memories/a.md (it changed).");
  assert.equal(applyReport(0, 1, [{ path: "/memories/a.md", reason: "it changed" }]), "Kin Memory: applied 0 of 1 change. Not applied: /memories/a.md (it changed).");
});

test("other passes: named by their source, a consolidation's one line per change kept, candidates listed printably", () => {
  assert.equal(passName("init"), "the initialization");
  assert.equal(passName("consolidate"), "the consolidation");
  const changes = [{ kind: "delete" as const, path: "/memories/facts/b.md", newPath: null }];
  const q = reviewNotice({ source: "consolidate", summary: "1 candidate group given to the model.\n- deletes /memories/facts/b.md (duplicate: …); read /memories/facts/a.md", changes });
  assert.equal(q, "Kin Memory: the consolidation proposes 1 change; the diffs are open. Nothing is written until you choose. "
    + "1 candidate group given to the model. – deletes /memories/facts/b.md (duplicate: …); read /memories/facts/a.md • delete /memories/facts/b.md");
  const item = candidateLabel({ kind: "contradiction", paths: ["/memories/facts/db.md", "/memories/facts/x\n.md"], reason: "they disagree:\nport 1 vs 2" });
  assert.equal(item.label, "contradiction: db.md, x\\x0a.md");
  assert.equal(item.detail, "they disagree: port 1 vs 2");
});

test("versionItems: newest first, deleted versions say so, with who wrote it and when", () => {
  const now = 1_000_000_000_000;
  const items = versionItems(
    [
      { version: 9, time: now / 1000 - 120, source: "tool", by: "by you, with a Kin Memory command", bytes: 0, deleted: true },
      { version: 4, time: now / 1000 - 3 * 86400, source: "external", by: "outside the editor", bytes: 52, deleted: false },
    ],
    9,
    now,
  );
  assert.deepEqual(items.map((i) => [i.label, i.description, i.deleted]), [
    ["$(circle-filled) Version 9", "deleted · by you, with a Kin Memory command · 2 min ago", true],
    ["Version 4", "52 bytes · outside the editor · 3 d ago", false],
  ]);
  // the file changed since the newest version was kept: no version is marked as the file's
  const changed = versionItems([{ version: 4, time: now / 1000, source: "edit", by: "by you in the editor", bytes: 5, deleted: false }], null, now);
  assert.equal(changed[0].label, "Version 4");
});

test("changeDescription and the badge tooltip read as sentences", () => {
  const now = 1_000_000_000_000;
  // Who leads the short line (the sidebar cuts it off); the icon says what happened, the tooltip says all.
  assert.equal(changeDescription({ by: "outside the editor", since: now / 1000 - 7200 }, now), "outside the editor · 2 h ago");
  assert.equal(changeSentence({ kind: "changed", by: "outside the editor", since: now / 1000 - 7200 }, now), "changed outside the editor · 2 h ago");
  assert.equal(changeSentence({ kind: "deleted", by: "by the agent", since: now / 1000 - 60 }, now), "deleted by the agent · 1 min ago");
  assert.equal(changesBadgeTooltip(1), "1 memory changed since your last review");
  assert.equal(changesBadgeTooltip(3), "3 memories changed since your last review");
});

test("filterMemories: any chosen value of a kind, every kind; describeFilter and the pick round trip", () => {
  const all = [
    mem("/memories/facts/a.md", "project-fact", "stale", { ageDays: 200 }),
    mem("/memories/episodes/b.md", "episodic", "expiring", { ageDays: 38, visible: false }),
    mem("/memories/prefs/c.md", "preference", "ok", { ageDays: 2 }),
  ];
  const paths = (f: Parameters<typeof filterMemories>[1]) => filterMemories(all, f).map((m) => m.path);
  assert.deepEqual(paths({ categories: [], statuses: [] }), all.map((m) => m.path));
  assert.deepEqual(paths({ categories: ["episodic", "preference"], statuses: [] }), ["/memories/episodes/b.md", "/memories/prefs/c.md"]);
  assert.deepEqual(paths({ categories: ["episodic", "preference"], statuses: [], workspace: "this" }), ["/memories/prefs/c.md"]);
  assert.deepEqual(paths({ categories: [], statuses: ["stale"], maxAgeDays: 30 }), []);
  const f = filterFrom(filterItems({ categories: ["episodic"], statuses: [], maxAgeDays: 30 }).filter((r) => r.picked));
  assert.deepEqual(f, { categories: ["episodic"], statuses: [], maxAgeDays: 30 });
  assert.equal(describeFilter(f), "filtered: episodic, ≤ 30 d old");
  assert.equal(describeFilter({ categories: [], statuses: [] }), "");
  // The health view's numbers: exactly the memories behind one, named.
  const byPaths = { categories: [], statuses: [], paths: ["/memories/prefs/c.md"], label: "preference, fine" };
  assert.deepEqual(paths(byPaths), ["/memories/prefs/c.md"]);
  assert.equal(isFiltering(byPaths), true);
  assert.equal(describeFilter(byPaths), "filtered: preference, fine");
  assert.deepEqual(paths({ categories: [], statuses: [], paths: [] }), []);
});

test("the newest session in the reflect pick: agent, date and size, then the first prompt as plain text", () => {
  const now = 1_000_000_000_000;
  const pick = sessionPick({ agent: "Claude Code", path: "/h/.claude/projects/-r/s.jsonl", modified: now / 1000 - 7200, size: 49_500, firstPrompt: "Fix the\nflaky \x1b[31mtest" }, now);
  assert.equal(pick.label, "Newest Claude Code session of this workspace");
  assert.match(pick.description, /^.+ \(2 h ago\) · 48 KB$/);
  assert.equal(pick.detail, "“Fix the flaky [31mtest” · /h/.claude/projects/-r/s.jsonl");
  // An older server sends none of them: the path alone, as before.
  assert.deepEqual(sessionPick({ agent: null, path: "/s.jsonl", modified: null, size: null, firstPrompt: null }, now),
    { label: "Newest agent session of this workspace", description: "", detail: "/s.jsonl" });
  assert.equal(formatSize(3 * 1024 * 1024), "3.0 MB");
  assert.equal(formatSize(120), "120 bytes");
});
