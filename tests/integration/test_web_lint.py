"""The web client's JavaScript (``web/*.js``) as the pinned ESLint judges it (``tools/node/lint-web.mjs``: the
recommended rules, browser globals, no unused variables): no warning and no error, so a typo'd name or a dead
variable fails the test command before a browser ever loads the page (issue 45)."""

from __future__ import annotations

import os
import subprocess

from pyramide.service.http.openapi import COMMITTED

NODE_TOOLS = COMMITTED.parents[1] / "tools" / "node"


def test_eslint_finds_nothing_in_the_web_client() -> None:
    assert (NODE_TOOLS / "node_modules" / "eslint").is_dir(), "no ESLint: scripts/setup.sh installs tools/node"
    done = subprocess.run(
        ["node", NODE_TOOLS / "lint-web.mjs"],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith(" findings") and " 0 findings" in done.stdout, done.stdout
