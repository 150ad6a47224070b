#!/usr/bin/env bash
# Builds the server wheel that the .vsix bundles (server-wheel/, replaced on every build).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
python="${KIN_PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x "$repo/.venv/bin/python" ]; then python="$repo/.venv/bin/python"; else python="python3"; fi
fi
rm -rf "$here/server-wheel"
mkdir -p "$here/server-wheel"
"$python" -m pip wheel --quiet --no-deps --disable-pip-version-check -w "$here/server-wheel" "$repo"
ls "$here/server-wheel"
