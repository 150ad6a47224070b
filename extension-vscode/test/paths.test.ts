import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import {
  bootstrapClaims, bootstrapFolder, bootstrapRoots, conventionalRoot, displayRoot, isAtOrUnder, isMemoryPath, isUnderRoot, machineRoots,
} from "../src/paths";

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

test("bootstrap roots: the memoryDir setting (~ expanded) and the server's last root, deduplicated", () => {
  const home = "/home/u";
  assert.deepEqual(bootstrapRoots({ setting: "~/notes/mem", remembered: "/data/mem", home }), [path.join(home, "notes", "mem"), "/data/mem"]);
  assert.deepEqual(bootstrapRoots({ setting: "/data/mem", remembered: "/data/mem/", home }), ["/data/mem"]);
  assert.deepEqual(bootstrapRoots({ setting: null, remembered: undefined, home }), []);
  assert.deepEqual(bootstrapRoots({ setting: "  ", remembered: "", home }), []);
});

test("the bootstrap patterns claim *.md below a .kin/memory folder or below a bootstrap root, nothing else", () => {
  assert.equal(conventionalRoot("/home/u/.kin/memory/facts/a.md"), "/home/u/.kin/memory");
  assert.equal(conventionalRoot("/home/u/.kin/memory"), "/home/u/.kin/memory");
  assert.equal(conventionalRoot("/home/u/.kin/memory-old/a.md"), undefined);
  assert.equal(conventionalRoot("/home/u/.kin/settings.toml"), undefined);
  assert.equal(bootstrapClaims("/home/u/.kin/memory/facts/a.md", []), true);
  assert.equal(bootstrapClaims("/home/u/.kin/memory/.index/a.md", []), false);
  assert.equal(bootstrapClaims("/data/mem/facts/a.md", []), false);
  assert.equal(bootstrapClaims("/data/mem/facts/a.md", ["/data/mem"]), true);
  assert.equal(bootstrapClaims("/data/mem/facts/a.txt", ["/data/mem"]), false);
  assert.equal(bootstrapClaims("/data/memory-other/a.md", ["/data/mem"]), false);
});

test("a workspace folder at or inside a bootstrap store starts the server; its parent does not", () => {
  assert.equal(bootstrapFolder("/home/u/.kin/memory", []), true);
  assert.equal(bootstrapFolder("/home/u/.kin/memory/facts", []), true);
  assert.equal(bootstrapFolder("/home/u/.kin", []), false);
  assert.equal(bootstrapFolder("/data/mem", ["/data/mem"]), true);
  assert.equal(bootstrapFolder("/data", ["/data/mem"]), false);
  assert.equal(isAtOrUnder("/data/mem", "/data/mem"), true);
  assert.equal(isAtOrUnder("/data/mem2", "/data/mem"), false);
});

test("roots below the home folder are shown with ~", () => {
  assert.equal(displayRoot("/home/u/.kin/memory", "/home/u"), path.join("~", ".kin", "memory"));
  assert.equal(displayRoot("/home/u", "/home/u"), "~");
  assert.equal(displayRoot("/home/user2/mem", "/home/u"), "/home/user2/mem");
  assert.equal(displayRoot("/data/mem", ""), "/data/mem");
});

test("machineRoots: KIN_MEMORY_DIR first (home expanded), then the default store", () => {
  assert.deepEqual(machineRoots("/home/u", { KIN_MEMORY_DIR: "~/notes/mem" }), ["/home/u/notes/mem", "/home/u/.kin/memory"]);
  assert.deepEqual(machineRoots("/home/u", { KIN_MEMORY_DIR: "  " }), ["/home/u/.kin/memory"]);
  assert.deepEqual(machineRoots("/home/u", {}), ["/home/u/.kin/memory"]);
});
