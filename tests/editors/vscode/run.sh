#!/usr/bin/env bash
# The VS Code extension's checks and its end-to-end test in real VS Code (code-server + headless
# Chromium): type check, lint and unit tests of extension-vscode/, `npm run package` (the .vsix with
# the bundled server wheel), then e2e.mjs drives the installed extension through the UI.
#
# Environment:
#   KIN_E2E_SERVER   `bundled` (default): no server setting and none on PATH, so the extension installs
#                    the wheel bundled in the .vsix; anything else is the `kinMemory.server.path`
#                    setting, e.g. the checkout's .venv/bin/kin-memory-lsp, or `false` to see it fail.
#   KIN_E2E_KEEP=1   keep the temporary folder (code-server logs, profile) for inspection.
#   KIN_E2E_ONLY=core|reflect|history|sync|secret|crash  after the first window is up, run only those checks (a quick loop
#                    while working on them; the full run is the test).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
EXT="$REPO/extension-vscode"
started=$(date +%s)

cd "$REPO"
# shellcheck source=scripts/setup.sh
source scripts/setup.sh
# shellcheck source=tests/editors/vscode/install.sh
source "$HERE/install.sh"
export PATH="$CACHE/nodebin:$PATH"

echo "extension: dependencies, type check, lint, unit tests, package"
cd "$EXT"
stamp=node_modules/.kin-installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
npm run --silent typecheck
npm run --silent lint
if ! npm test --silent > "$CACHE/unit.log" 2>&1; then cat "$CACHE/unit.log"; exit 1; fi
echo "unit tests: $(grep -E '^(#|ℹ) (pass|fail) ' "$CACHE/unit.log" | tr '\n' ' ')"
KIN_PYTHON="$VENV/bin/python" npm run --silent package > "$CACHE/package.log" 2>&1 || { cat "$CACHE/package.log"; exit 1; }
VSIX="$EXT/kin-memory.vsix"
[ -f "$VSIX" ] || { echo "npm run package produced no $VSIX" >&2; exit 1; }
listing="$("$VENV/bin/python" -m zipfile -l "$VSIX")"
grep -q 'extension/server-wheel/kin_memory-.*\.whl' <<< "$listing" || { echo "the .vsix bundles no server wheel" >&2; exit 1; }
cd "$REPO"

export E2E_VSIX="$VSIX"
export E2E_NODE_MODULES="$CACHE/npm/node_modules"
export E2E_FIXTURE="$HERE/fixture/store"
export E2E_ARTIFACTS="$REPO/tests/editors/.artifacts"
export E2E_SERVER="${KIN_E2E_SERVER:-bundled}"
export E2E_PIP_CACHE="$CACHE/pip"
export E2E_PYTHON="$VENV/bin/python"           # runs the scripted model server (tests/editors/fake_model.py)
export E2E_FAKE_MODEL="$REPO/tests/editors/fake_model.py"
mkdir -p "$E2E_ARTIFACTS"
status=0
"$NODE24" "$HERE/e2e.mjs" || status=$?
echo "VS Code end-to-end: $([ $status = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - started )) s (setup and build included)"
exit $status
