#!/usr/bin/env bash
# The README's test command: prepares what the tests need beyond the Python package, then runs
# the whole suite (arguments go to pytest, e.g. `scripts/test.sh tests/test_spec.py`).
#
# - the venv from the README's first command (.venv), activated here;
# - the Node client's one dependency (koffi, pinned by clients/node/package-lock.json) for the
#   tests that call compiled libraries from Node.js (tests/test_compile_node.py,
#   tests/test_compile_differential.py, ...): `npm ci`, run only when clients/node/node_modules
#   does not hold exactly what the lockfile pins, so a second run skips it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${VIRTUAL_ENV:-}" ]; then
  if [ ! -f .venv/bin/activate ]; then
    echo "scripts/test.sh: no .venv here; run the README's first command first" >&2
    exit 1
  fi
  . .venv/bin/activate
fi

node_client_installed() {
  # npm records what it installed in node_modules/.package-lock.json (the platform's optional
  # packages only); installed = koffi there and every recorded package as the lockfile pins it.
  python - <<'EOF'
import json, pathlib, sys
root = pathlib.Path("clients/node")
try:
    lock = json.loads((root / "package-lock.json").read_text())["packages"]
    installed = json.loads((root / "node_modules" / ".package-lock.json").read_text())["packages"]
except (OSError, ValueError, KeyError):
    sys.exit(1)
ok = "node_modules/koffi" in installed and all(
    lock.get(name) == entry and (root / name).is_dir() for name, entry in installed.items())
sys.exit(0 if ok else 1)
EOF
}

if ! node_client_installed; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "scripts/test.sh: npm is not on PATH; install Node.js 18 or newer (with npm)" >&2
    exit 1
  fi
  echo "== clients/node: npm ci"
  (cd clients/node && npm ci --no-audit --no-fund)
fi

# --durations: the slowest tests are named at the end of every run, so a CI log shows where the
# suite's time goes.
exec python -m pytest -q -n 2 -p no:cacheprovider --durations=60 "$@"
