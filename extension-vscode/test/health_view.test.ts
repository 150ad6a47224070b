import { test } from "node:test";
import assert from "node:assert/strict";
import { escapeHtml, healthPage, segmentPaths } from "../src/health_view";
import type { MemoryEntry, StatsResult } from "../src/protocol";

const zero = { total: 0, ok: 0, stale: 0, expiring: 0, expired: 0, quiet: 0 };
const HOSTILE = '/memories/facts/<img src=x onerror=alert(1)>"\'.md';

function stats(over: Partial<StatsResult> = {}): StatsResult {
  return {
    byCategory: {
      "project-fact": { total: 3, ok: 1, stale: 1, expiring: 0, expired: 0, quiet: 1 },
      preference: { ...zero, total: 1, ok: 1 }, episodic: { ...zero, total: 1, expiring: 1 }, session: zero,
    },
    expiringSoon: [{ path: "/memories/episodes/e.md", uri: "file:///s/episodes/e.md", category: "episodic", expires: "2026-12-07", days: 4 }],
    quietByRepository: [{ workspace: "/gone/repo", paths: [HOSTILE], uris: ["file:///s/facts/h.md"] }],
    groups: [{ kind: "contradiction", paths: ["/memories/facts/a.md", "/memories/facts/b.md"], uris: ["file:///s/a", "file:///s/b"], reason: "<script>alert(2)</script> port 5432 vs 5433" }],
    promptBlock: { lines: 50, bytes: 2048, maxLines: 200, maxBytes: 25600, truncated: false },
    reviewQueue: 2, indexState: { state: "ready", memories: 5 }, memoryEnabled: true,
    root: "/home/u/.kin/memory", rootSource: "default", workspaces: [],
    ...over,
  };
}

const entry = (path: string, category: string, status: MemoryEntry["status"]): MemoryEntry =>
  ({ path, uri: "file://" + path, category, workspace: null, visible: true, ageDays: 1, status });
const LIST = [
  entry("/memories/facts/ok.md", "project-fact", "ok"), entry("/memories/facts/old.md", "project-fact", "stale"),
  entry(HOSTILE, "project-fact", "ok"), entry("/memories/prefs/p.md", "preference", "ok"), entry("/memories/episodes/e.md", "episodic", "expiring"),
];

test("escapeHtml leaves no markup", () => {
  assert.equal(escapeHtml(`<a href="x" onclick='y'>&`), "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;");
});

test("the page: strict policy with a nonce, no remote resource, no inline style attribute, no innerHTML", () => {
  const { html } = healthPage(stats(), LIST, { nonce: "N0nce", home: "/home/u" });
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-N0nce'; script-src 'nonce-N0nce';">/);
  assert.doesNotMatch(html, /unsafe-inline|unsafe-eval|https?:\/\//);
  assert.doesNotMatch(html, / style="/);
  assert.doesNotMatch(html, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.match(html, /<script nonce="N0nce">/);
});

test("untrusted paths and reasons are shown as text only", () => {
  const { html } = healthPage(stats(), LIST, { nonce: "n", home: "/home/u" });
  assert.doesNotMatch(html, /<img/);
  assert.doesNotMatch(html, /<script>alert/);
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;&quot;&#39;\.md/);
  assert.match(html, /&lt;script&gt;alert\(2\)&lt;\/script&gt; port 5432 vs 5433/);
});

test("every number opens what is behind it: quiet memories leave their lifecycle status", () => {
  const seg = segmentPaths(stats(), LIST);
  assert.deepEqual(seg.get("project-fact/quiet"), [HOSTILE]);
  assert.deepEqual(seg.get("project-fact/ok"), ["/memories/facts/ok.md"]);
  assert.deepEqual(seg.get("project-fact/stale"), ["/memories/facts/old.md"]);
  const { html, targets } = healthPage(stats(), LIST, { nonce: "n", home: "/home/u" });
  const ids = [...html.matchAll(/data-id="(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(ids, targets.map((_, i) => i)); // every button names its own target, in order
  assert.ok(targets.some((t) => t.kind === "filter" && t.label === "project-fact, stale" && t.paths.join() === "/memories/facts/old.md"));
  assert.ok(targets.some((t) => t.kind === "open" && t.uri === "file:///s/episodes/e.md"));
  assert.ok(targets.some((t) => t.kind === "group" && t.group.kind === "contradiction"));
  assert.ok(targets.some((t) => t.kind === "setEnabled" && t.enabled === false));
  assert.ok(targets.some((t) => t.kind === "command" && t.command === "kinMemory.restamp"));
  assert.match(html, /<td data-category="project-fact" data-status="stale"><button[^>]*>1<\/button><\/td>/);
  assert.match(html, /<td data-category="session" data-status="total">0<\/td>/);
  assert.match(html, /Store: <code id="store-root">~\/\.kin\/memory<\/code>, found by the default location/);
  assert.match(html, /50 of 200 lines/);
  assert.match(html, /2 changes wait for your review/);
});

test("memory off: the switch says so and turns it back on", () => {
  const { html, targets } = healthPage(stats({ memoryEnabled: false }), LIST, { nonce: "n", home: "/home/u" });
  assert.match(html, /role="switch" aria-checked="false"/);
  assert.ok(targets.some((t) => t.kind === "setEnabled" && t.enabled === true));
});

test("the page leads with what needs action: errors, then secrets, then sync conflicts, before the counts", () => {
  const a = (kind: "error" | "secret" | "conflict", code: string, path: string) =>
    ({ kind, code, message: `<b>${code}</b> message`, path, uri: "file:///s" + path, line: 1 });
  const attention = [a("conflict", "KM800", "/memories/facts/c.md"), a("secret", "KM602", "/memories/facts/s.md"), a("error", "KM102", "/memories/facts/e.md")];
  const { html } = healthPage(stats(), LIST, { nonce: "n", home: "/home/u", attention });
  const at = (needle: string) => html.indexOf(needle);
  assert.ok(at("Needs your attention: 3 findings") > 0 && at("Needs your attention") < at("by category"));
  assert.ok(at("KM102") < at("KM602") && at("KM602") < at("KM800"), "errors, secrets, conflicts");
  assert.doesNotMatch(html, /<b>KM/);
  const none = healthPage(stats(), LIST, { nonce: "n", home: "/home/u" }).html;
  assert.match(none, /No errors, no secrets, no sync conflicts\./);
});

test("a difference between the counts and the search index is explained", () => {
  const { html } = healthPage(stats({ indexState: { state: "ready", memories: 4 } }), LIST, { nonce: "n", home: "/home/u" });
  assert.match(html, /1 memory counted above is not in the search index/);
});
