// Bundles the extension with esbuild and copies the grammars from the repository's syntaxes/ folder.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
mkdirSync(join(here, "syntaxes"), { recursive: true });
for (const grammar of ["kin-memory.tmLanguage.json", "kin-memory-frontmatter.injection.json"]) {
  copyFileSync(join(here, "..", "syntaxes", grammar), join(here, "syntaxes", grammar));
}
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
