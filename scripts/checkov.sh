#!/usr/bin/env bash
# Run by scripts/test: checkov, the policy linter the Kubernetes manifests are held to
# (tests/integration/test_kubernetes_policies.py), in a virtual environment of its own, .tools/checkov, from the
# hash-pinned scripts/checkov-requirements.txt, compiled to bytecode (where PYTHONDONTWRITEBYTECODE is set, checkov
# would compile its imports on every start: 5.5 s of CPU instead of 2.8 s); installed again only when that file or
# this one changed (their hash is the stamp beside the tool). Not in the project's uv.lock: `uv add --dev checkov`
# added 68 packages to it and moved two of the project's own back (packaging 26.4 to 23.2, pytest 9.2.0 to 9.1.1).
# Where it cannot be installed it says so; the test then fails saying what is missing.
CHECKOV_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHECKOV_ENV="$CHECKOV_ROOT/.tools/checkov"
CHECKOV_STAMP="$CHECKOV_ENV/.pyramide-requirements-stamp"
CHECKOV_HASH="$(cat "$CHECKOV_ROOT/scripts/checkov-requirements.txt" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$CHECKOV_STAMP" 2>/dev/null)" != "$CHECKOV_HASH" ]; then
    echo "== installing checkov into .tools/checkov (scripts/checkov-requirements.txt or checkov.sh changed)"
    rm -rf "$CHECKOV_ENV"
    if "$CHECKOV_ROOT/.tools/bin/uv" venv --quiet --python "$CHECKOV_ROOT/.venv/bin/python" "$CHECKOV_ENV" \
        && VIRTUAL_ENV="$CHECKOV_ENV" "$CHECKOV_ROOT/.tools/bin/uv" pip sync --quiet --require-hashes --compile-bytecode \
            "$CHECKOV_ROOT/scripts/checkov-requirements.txt"; then
        echo "$CHECKOV_HASH" > "$CHECKOV_STAMP"
    else
        echo "!! installing checkov failed: the Kubernetes policy test will say what is missing" >&2
    fi
fi
