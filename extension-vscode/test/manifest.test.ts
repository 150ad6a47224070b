import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

interface Step { id: string; description: string; media: { markdown?: string }; completionEvents?: string[] }
interface Manifest {
  activationEvents: string[];
  contributes: {
    commands: { command: string }[];
    languages?: unknown[];
    grammars: { scopeName: string; path: string; language?: string; injectTo?: string[] }[];
    walkthroughs: { id: string; steps: Step[] }[];
  };
}

// Compiled to out/test/: the extension's folder is two up from here.
const root = path.join(__dirname, "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as Manifest;
const ours = new Set(manifest.contributes.commands.map((c) => c.command));

test("memory files stay markdown: no language of our own, the frontmatter grammar is injected into markdown", () => {
  assert.equal(manifest.contributes.languages, undefined);
  assert.ok(manifest.contributes.grammars.every((g) => g.language === undefined));
  const injection = manifest.contributes.grammars.find((g) => g.injectTo);
  assert.deepEqual(injection?.injectTo, ["text.html.markdown"]);
  // build.mjs copies both grammars from the repository's syntaxes/ folder.
  for (const g of manifest.contributes.grammars) {
    assert.ok(fs.existsSync(path.join(root, "..", "syntaxes", path.basename(g.path))), `${g.path} has a source in syntaxes/`);
  }
});

test("activation: at start-up (a cheap look for a store decides whether the server starts) and for markdown", () => {
  assert.ok(manifest.activationEvents.includes("onStartupFinished"));
  assert.ok(manifest.activationEvents.includes("onLanguage:markdown"));
});

test("the walkthrough: every step has its page, and every command it links is ours or VS Code's", () => {
  const [walk] = manifest.contributes.walkthroughs;
  assert.deepEqual(walk.steps.map((s) => s.id), ["store", "health", "reflection", "diagnostics"]);
  for (const step of walk.steps) {
    assert.ok(step.media.markdown && fs.existsSync(path.join(root, step.media.markdown)), `${step.id}: ${step.media.markdown} exists`);
    const linked = [...step.description.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1]);
    assert.ok(linked.length > 0, `${step.id} links a command`);
    for (const c of linked) assert.ok(ours.has(c) || c.startsWith("workbench."), `${step.id} links ${c}`);
    for (const e of step.completionEvents ?? []) {
      const command = e.startsWith("onCommand:") ? e.slice("onCommand:".length) : undefined;
      if (command) assert.ok(ours.has(command) || command.startsWith("workbench."), `${step.id} completes on ${command}`);
    }
  }
});

test("Show server output and Show memory health are palette commands", () => {
  assert.ok(ours.has("kinMemory.showOutput") && ours.has("kinMemory.showHealth"));
});
