"""The licence (issue 59, item 5): a fresh clone had none (``tools/node/package.json`` said ``UNLICENSED``), so nobody
outside could ship on the service. Apache-2.0, named alike wherever a package or the schema states one."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_licence_is_apache_2_0_everywhere_it_is_stated() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert json.loads((ROOT / "tools/node/package.json").read_text(encoding="utf-8"))["license"] == "Apache-2.0"
    schema = json.loads((ROOT / "openapi/openapi.json").read_text(encoding="utf-8"))
    assert schema["info"]["license"] == {"name": "Apache-2.0", "identifier": "Apache-2.0"}
    assert "LICENSE" in (ROOT / "Dockerfile").read_text(encoding="utf-8")  # the image's build needs it and carries it
