#!/usr/bin/env bash
# Grammar tests for kin-memory.tmLanguage.json (vscode-tmgrammar-test), against VS Code's markdown
# grammar for the embedded body, and for kin-memory-frontmatter.injection.json injected into Markdown as
# VS Code loads it (grammars.json). Installs its npm tooling into syntaxes/node_modules (git-ignored).
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.kin-installed
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ]; then
  npm install --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
grammars=(-g kin-memory.tmLanguage.json -g node_modules/tm-grammars/grammars/markdown.json)
run() {
  # The markdown grammar embeds dozens of fenced-code languages we do not load: drop those notices.
  local status=0
  node_modules/.bin/vscode-tmgrammar-test "${grammars[@]}" "$@" > "$tmp/log" 2>&1 || status=$?
  grep -v '^grammar not found for' "$tmp/log" || true
  return "$status"
}

run "tests/[!i]*.test.md"
# Injection grammars load only from a configuration's contributes.grammars (injectTo).
grammars=(--config grammars.json)
run "tests/injection*.test.md"
grammars=(-g kin-memory.tmLanguage.json -g node_modules/tm-grammars/grammars/markdown.json)

# The runner must be able to fail: a copy of a test with one scope made wrong has to be reported.
sed 's/^\(<!--      ^^^^^^^^\) constant.language.category.kin-memory$/\1 invalid.illegal.category.kin-memory/' \
  tests/values.test.md > "$tmp/wrong.test.md"
if run "$tmp/wrong.test.md" > "$tmp/out" 2>&1; then
  echo "grammar test runner accepted a wrong scope" >&2
  exit 1
fi
grep -q "missing required scopes: invalid.illegal.category.kin-memory" "$tmp/out"
echo "checked: a wrong scope fails the grammar tests"
