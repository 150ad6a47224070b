#!/usr/bin/env bash
# Sets up everything the tests need (a private virtual environment, editors, node tooling) and runs
# every test: lint, format and type checks, unit + LSP tests (pytest), grammar tests, the Neovim and
# VS Code end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
source scripts/setup.sh

step() { printf '\n==> %s\n' "$*"; }

step "ruff (lint and format)"
"$VENV/bin/ruff" check server tests scripts
"$VENV/bin/ruff" format --check server tests scripts
step "mypy"
"$VENV/bin/mypy"
step "pytest"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
if [ -x syntaxes/test.sh ]; then
  step "grammar tests"
  syntaxes/test.sh
fi
if [ -x tests/editors/nvim/run.sh ]; then
  step "Neovim end-to-end (headless)"
  tests/editors/nvim/run.sh
fi
if [ -x tests/editors/vscode/run.sh ]; then
  step "VS Code end-to-end (code-server + headless Chromium)"
  tests/editors/vscode/run.sh
fi
step "all tests passed"
