import { test } from "node:test";
import assert from "node:assert/strict";
import { type Inspected, serverSection, type UserLevelKey } from "../src/settings";

test("a folder's settings cannot turn automatic sync on: the server gets the user's values", () => {
  // VS Code's effective section, with a cloned repository's `.vscode/settings.json` mixed in.
  const effective = { sync: { afterWrites: true, intervalMinutes: 1 }, hover: { related: "off" } };
  const defaults: Partial<Record<UserLevelKey, Inspected>> = {
    "sync.afterWrites": { defaultValue: false },
    "sync.intervalMinutes": { defaultValue: 0 },
  };
  const section = serverSection(effective, (key) => defaults[key]);
  assert.deepEqual(section.sync, { afterWrites: false, intervalMinutes: 0 });
  const mine = serverSection(effective, (key) => (key === "sync.intervalMinutes" ? { defaultValue: 0, globalValue: 30 } : defaults[key]));
  assert.deepEqual(mine.sync, { afterWrites: false, intervalMinutes: 30 });
});
