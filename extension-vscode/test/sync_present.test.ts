import { test } from "node:test";
import assert from "node:assert/strict";
import type { SyncResult } from "../src/protocol";
import { conflictSides, remoteProblem, secretWarning, syncMessage } from "../src/sync_present";

const result = (over: Partial<SyncResult> = {}): SyncResult => ({
  incoming: [], outgoing: [], conflicts: [], skipped: [], summary: [], needsRemote: false, secrets: [], ...over,
});

test("a sync's message is the server's sentences, a warning only when a conflict was left", () => {
  const came = "1 change came in: /memories/facts/a.md (new on laptop).";
  assert.deepEqual(syncMessage(result({ summary: [came, "1 change went out: /memories/b.md (new)."] })),
    { text: `Kin Memory: ${came} 1 change went out: /memories/b.md (new).`, warn: false });
  const overlap = { path: "/memories/facts/db.md", kind: "overlap", kept: "desk", other: "laptop" };
  const said = syncMessage(result({ conflicts: [overlap], summary: ["/memories/facts/db.md was changed in the same place here and on laptop."] }));
  assert.equal(said.warn, true);
  assert.match(said.text, /^Kin Memory: \/memories\/facts\/db\.md was changed/);
  assert.equal(syncMessage(result()).text, "Kin Memory: the sync is done.");
});

test("secrets that went out: a warning of their own, not the last words of the sync's message", () => {
  const secret = "A memory that went out looks like it holds a secret (KM602): /memories/facts/key.md. Keep the remote private, or move the secret out of the store.";
  const res = result({ summary: ["1 change went out: /memories/facts/key.md (new).", secret], secrets: ["/memories/facts/key.md"] });
  assert.equal(syncMessage(res).text, "Kin Memory: 1 change went out: /memories/facts/key.md (new).");
  assert.equal(secretWarning(res), "Kin Memory: A memory that went to the remote looks like it holds a secret: /memories/facts/key.md. Keep the remote private, or move the secret out of the store.");
  const many = secretWarning({ secrets: ["/memories/a.md", "/memories/b.md", "/memories/c.md", "/memories/d\n.md"] });
  assert.match(many ?? "", /4 memories that went to the remote look like they hold a secret: \/memories\/a\.md, \/memories\/b\.md, \/memories\/c\.md and 1 more\./);
  assert.equal(secretWarning(result()), undefined);
});

test("the remote's address: one line, not empty", () => {
  assert.equal(remoteProblem("/srv/memory.git"), undefined);
  assert.equal(remoteProblem("git@example.com:me/memory.git"), undefined);
  assert.match(remoteProblem("   ") ?? "", /address of a git repository/);
  assert.match(remoteProblem("a\nb") ?? "", /one line/);
});

test("a conflict's sides: this machine's left, the other's right, a deleted side empty and said so", () => {
  const both = conflictSides({ path: "/memories/facts/db.md", kind: "overlap", mine: "A", theirs: "B", other: "laptop" });
  assert.deepEqual(both, { mine: { label: "this machine", text: "A" }, theirs: { label: "laptop", text: "B" }, title: "db.md (this machine ↔ laptop)" });
  const deleted = conflictSides({ path: "/memories/facts/ci.md", kind: "delete-vs-edit", mine: "edit", theirs: null, other: "laptop" });
  assert.deepEqual(deleted.theirs, { label: "deleted on laptop", text: "" });
  assert.equal(deleted.title, "ci.md (this machine ↔ deleted on laptop)");
  const mineGone = conflictSides({ path: "/memories/facts/ci.md", kind: "delete-vs-edit", mine: null, theirs: "edit", other: "laptop" });
  assert.equal(mineGone.title, "ci.md (deleted on this machine ↔ laptop)");
});
