"""The committed schema as Spectral's OpenAPI ruleset (``spectral:oas``, through ``openapi/.spectral.yaml``) judges
it: no error (issue 44, item 5). Its one warning left, ``info-contact``, is the contact the project does not have."""

from __future__ import annotations

import json
import os
import subprocess

from pyramide.service.http.openapi import COMMITTED

SPECTRAL = COMMITTED.parents[1] / "tools" / "node" / "node_modules" / ".bin" / "spectral"
RULESET = COMMITTED.with_name(".spectral.yaml")


def test_spectral_oas_ruleset_reports_no_error() -> None:
    assert SPECTRAL.exists(), "no Spectral: scripts/setup.sh installs the Node tools into tools/node"
    done = subprocess.run(
        [SPECTRAL, "lint", "--ruleset", RULESET, "--format", "json", "--quiet", COMMITTED],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    found = json.loads(done.stdout or "[]")
    errors = [f"{'.'.join(map(str, r['path']))}: {r['code']}: {r['message']}" for r in found if r["severity"] == 0]
    assert not errors, "\n".join(errors)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["code"] for r in found} <= {"info-contact"}, found
