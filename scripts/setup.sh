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
