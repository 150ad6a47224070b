import { test } from "node:test";
import assert from "node:assert/strict";
import { CRASH_LIMIT, CrashCounter, downMessage, OPEN_SETTINGS, RESTART } from "../src/server_down";

test("one message per cause, no literal backticks, with the actions that fix it", () => {
  const missing = downMessage({ kind: "missing", detail: "found no `kin-memory-lsp` on PATH; set `kinMemory.server.path`." });
  assert.doesNotMatch(missing.message, /`/);
  assert.match(missing.message, /"kin-memory-lsp"/);
  assert.deepEqual(missing.actions.slice(0, 1), [OPEN_SETTINGS]);
  const failed = downMessage({ kind: "failed", command: "/opt/nope" });
  assert.ok(failed.actions.includes(OPEN_SETTINGS) && failed.actions.includes(RESTART));
  assert.equal(failed.key, downMessage({ kind: "failed", command: "/opt/nope" }).key, "the same cause is the same message");
  const crashed = downMessage({ kind: "crashed", count: 4, minutes: 3 });
  assert.equal(crashed.actions[0], RESTART);
  assert.match(crashed.message, /stopped unexpectedly 4 times in 3 minutes/);
});

test("the crash counter restarts until the limit within the window, and forgets old crashes", () => {
  const c = new CrashCounter();
  const restarts = Array.from({ length: CRASH_LIMIT }, (_, i) => c.crashed(i * 1000));
  assert.deepEqual(restarts, [true, true, true, false]);
  const later = new CrashCounter();
  assert.equal(later.crashed(0), true);
  assert.equal(later.crashed(10 * 60_000), true);
  assert.equal(later.count, 1);
});
