# Sourced by scripts/*.sh: creates .venv with the package and its test extras (idempotent).
VENV="${KIN_VENV:-$PWD/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
stamp="$VENV/.kin-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  "$VENV/bin/pip" install -q -e ".[test]"
  touch "$stamp"
fi
export PATH="$VENV/bin:$PATH"
# An editable install leaves the package uncompiled, and with PYTHONDONTWRITEBYTECODE set every server
# start would compile it again (~60 ms): compile it here, as `pip install .` does for a user.
"$VENV/bin/python" -m compileall -q server/kin_memory >/dev/null 2>&1 || true
