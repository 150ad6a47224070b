#!/usr/bin/env bash
# Sets up the package and checks the memory store: the user's (KIN_MEMORY_DIR, ~/.kin/settings.toml
# memory_dir, ~/.kin/memory) or, when there is none, the example store bundled with the package.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
exec kin-memory check --example-if-missing "$@"
