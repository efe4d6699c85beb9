"""checkov's policies over ``deploy/`` (issue 56, item 7): its Kubernetes checks (security context, probes,
resources, image by digest, network policy, service account, …) and its secret scanner find nothing, and each check
left out is a known one with its reason, in a ``checkov.io/skip<n>`` annotation on the resource (the reason travels
with the manifest) and in ``docs/operations.md``. One run of checkov (it takes seconds to start), offline
(``--skip-download``: no look-up of Prisma Cloud's guidelines). The schemas are
``tests/unit/test_kubernetes_manifests.py``'s."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHECKOV = ROOT / ".tools" / "checkov" / "bin" / "checkov"
EXPLAINED = {("CKV_K8S_35", "Deployment.pyramide.pyramide")}
"""The checks left out, by resource; ``docs/operations.md`` ("Kubernetes", "checkov") says why, as the annotation
does: REDIS_URL, which may hold Redis's password, has no ``_FILE`` form."""


def _checkov(directory: Path, cwd: Path) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    done = subprocess.run(
        [CHECKOV, "--directory", directory, "--framework", "kubernetes", "secrets", "--skip-download",
         "--compact", "--output", "json"],
        capture_output=True, text=True, timeout=300, check=False, cwd=cwd,
    )  # fmt: skip
    assert done.stdout.startswith(("{", "[")), done.stdout[-2000:] + done.stderr[-2000:]
    reports = json.loads(done.stdout)
    return (reports if isinstance(reports, list) else [reports]), done


def test_checkov_finds_nothing_that_is_not_explained(tmp_path: Path) -> None:
    assert CHECKOV.exists(), "no checkov: scripts/test installs it into .tools/checkov (scripts/checkov.sh)"
    reports, done = _checkov(ROOT / "deploy", tmp_path)
    kubernetes = next(report for report in reports if report["check_type"] == "kubernetes")
    assert kubernetes["summary"]["passed"] >= 80, "checkov checked the manifests"
    results = [report["results"] for report in reports]
    failed = [
        f"{check['check_id']} {check['resource']} ({check['file_path']}): {check['check_name']}"
        for result in results
        for check in result["failed_checks"]
    ]
    assert not failed, "\n".join(failed)
    assert not [error for result in results for error in result["parsing_errors"]]
    skipped = {
        (check["check_id"], check["resource"]): check["check_result"].get("suppress_comment") or ""
        for result in results
        for check in result["skipped_checks"]
    }
    assert set(skipped) == EXPLAINED, f"a new skip: explain it here and in docs/operations.md: {skipped}"
    assert all(len(reason) > 20 for reason in skipped.values()), skipped
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert all(check_id in operations for check_id, _ in EXPLAINED)
    assert done.returncode == 0, done.stderr[-2000:]
