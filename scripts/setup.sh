# Sourced by scripts/run and scripts/test: make sure the locked environment exists, quietly, on any fresh machine
# with Python 3.11+ and access to PyPI. uv itself is installed from PyPI into .tools/ at a pinned version.
# With SETUP_SCOPE=serve (scripts/run) only what serving needs: the service's own dependencies, in .venv-serve,
# no development tools and no Node (issue 59: serving installed 142 MB of Node tools and a 580 MB venv of test
# dependencies); otherwise (scripts/test) everything, in .venv.
set -euo pipefail
SETUP_FOR="${SETUP_SCOPE:-all}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UV_VERSION="0.13.8"
TOOLS="$ROOT/.tools"
if [ "$("$TOOLS/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    rm -rf "$TOOLS"
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install --quiet "uv==$UV_VERSION"
fi
export UV_PYTHON_DOWNLOADS=never
VENV="$ROOT/.venv"
SYNC_OPTIONS=()
if [ "$SETUP_FOR" = "serve" ]; then
    VENV="$ROOT/.venv-serve"
    SYNC_OPTIONS=(--no-dev)
fi
export UV_PROJECT_ENVIRONMENT="$VENV"
# `uv sync` would rebuild the mypyc-compiled solver on every start (20-25 s): the build hook renames pyproject.toml
# and back, which changes its ctime, which uv takes for a change. So the environment is synced only when what it is
# built from changed: the lock, pyproject.toml and the compiled modules' sources (with the engine they are typed
# against), hashed into a stamp beside the build; or when a compiled module is missing.
STAMP="$VENV/.pyramide-build-stamp"
SOURCES="$(cd "$ROOT" && cat pyproject.toml uv.lock service/pyramide/solver/*.py service/pyramide/engine/*.py \
    | sha256sum | cut -d' ' -f1)"
COMPILED="$(cd "$ROOT" && sed -n '/hooks.mypyc/,/^]/s/^ *"\(service\/.*\)\.py",$/\1/p' pyproject.toml)"
missing=""
for module in $COMPILED; do
    compgen -G "$ROOT/$module.*.so" > /dev/null || missing="$module"
done
# The environment's modules are compiled to bytecode as they are installed (--compile-bytecode), and the project's own
# below on every start (only what changed): where PYTHONDONTWRITEBYTECODE is set, as on the CI machines, Python would
# otherwise compile every module it imports from source in every process: 2.0 s of CPU to import the service instead
# of 0.85 s, paid by each server, worker and solver process a test run starts.
if [ "$(cat "$STAMP" 2>/dev/null)" != "$SOURCES" ] || [ -n "$missing" ]; then
    echo "setup: building the environment and the compiled solver (its sources changed; about 25 s)" >&2
    "$TOOLS/bin/uv" sync --locked --quiet --compile-bytecode ${SYNC_OPTIONS[@]+"${SYNC_OPTIONS[@]}"} --project "$ROOT"
    echo "$SOURCES" > "$STAMP"
fi
# The project's Node tools (tools/node: TypeScript, the OpenAPI client generators, Spectral, ESLint, axe-core), installed exactly as
# locked, again only when the lock changed (its hash is the stamp beside them).
NODE_TOOLS="$ROOT/tools/node"
NODE_STAMP="$NODE_TOOLS/node_modules/.pyramide-lock-stamp"
NODE_LOCK="$(sha256sum "$NODE_TOOLS/package-lock.json" | cut -d' ' -f1)"
if [ "$SETUP_FOR" != "serve" ] && [ "$(cat "$NODE_STAMP" 2>/dev/null)" != "$NODE_LOCK" ]; then
    echo "setup: installing the Node tools in tools/node (their lock changed)" >&2
    npm ci --prefix "$NODE_TOOLS" --silent
    echo "$NODE_LOCK" > "$NODE_STAMP"
fi
"$VENV/bin/python" -m compileall -q -j 0 "$ROOT/service" >/dev/null
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
