"""Markers by kind, set from where a test lives and what it uses (``-m unit``, ``-m "not browser"``; CONTRIBUTING.md,
"Running the tests"), the groups pytest-xdist keeps on one worker (``--dist loadgroup``), and the figures the tests
report (``figure`` user properties), printed in the summary. This file is loaded by the xdist controller too, which
collects nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        kind = item.path.relative_to(TESTS).parts[0]
        fixtures = getattr(item, "fixturenames", ())
        if kind == "unit":
            item.add_marker(pytest.mark.unit)
        if kind == "containers":
            item.add_marker(pytest.mark.container)
        if "redis_server" in fixtures:
            item.add_marker(pytest.mark.redis)
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        if _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(f"module-{item.path.relative_to(TESTS)}"))


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a module-scoped fixture (a Chromium, a built image or generated client, a cluster):
    such a module's tests run on one worker, so that the fixture is made once, as a serial run makes it. The
    container tests' one server on port 8000 relies on it too."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


FIGURES_SHOWN: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "figure" and value not in FIGURES_SHOWN:
            FIGURES_SHOWN.append(str(value))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in FIGURES_SHOWN:
        terminalreporter.write_line(line)
