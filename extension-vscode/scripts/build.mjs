// Bundles the extension with esbuild and copies the grammar from the repository's syntaxes/ folder.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
mkdirSync(join(here, "syntaxes"), { recursive: true });
copyFileSync(join(here, "..", "syntaxes", "kin-memory.tmLanguage.json"), join(here, "syntaxes", "kin-memory.tmLanguage.json"));
await build({
  entryPoints: [join(here, "src", "extension.ts")],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  outfile: join(here, "dist", "extension.js"),
  sourcemap: true,
  minify: process.argv.includes("--minify"),
  logLevel: "warning",
});
console.log("built dist/extension.js");
