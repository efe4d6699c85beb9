# Sourced by scripts/run and scripts/test: make sure the locked environment exists, quietly, on any fresh machine
# with Python 3.11+ and access to PyPI. uv itself is installed from PyPI into .tools/ at a pinned version.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UV_VERSION="0.13.8"
TOOLS="$ROOT/.tools"
if [ "$("$TOOLS/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    rm -rf "$TOOLS"
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install --quiet "uv==$UV_VERSION"
fi
export UV_PYTHON_DOWNLOADS=never
export UV_PROJECT_ENVIRONMENT="$ROOT/.venv"
"$TOOLS/bin/uv" sync --locked --quiet --project "$ROOT"
export PATH="$ROOT/.venv/bin:$PATH"
cd "$ROOT"
