"""Markers by kind, set from where a test lives and what it uses (``-m unit``, ``-m "not browser"``; CONTRIBUTING.md,
"Running the tests"), and the figures the tests report (``figure`` user properties), printed in the summary. This
file is loaded by the xdist controller too, which collects nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyramide.service.games.snapshots import check_every_snapshot

TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """Every snapshot any test builds in this process is validated against the documented model (the service
    itself skips it on the hot path: ``games/snapshots.py``)."""
    del config
    check_every_snapshot()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks each test by what it needs, then puts the files that hold a ``slow`` test first (pytest-randomly's order
    kept within each kind): pytest-xdist hands out whole files in this order (``--no-loadscope-reorder``), so the
    few long ones start early instead of leaving one worker alone with them at the end."""
    _mark_by_kind(items)
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


def _mark_by_kind(items: list[pytest.Item]) -> None:
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


FIGURES_SHOWN: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "figure" and value not in FIGURES_SHOWN:
            FIGURES_SHOWN.append(str(value))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in FIGURES_SHOWN:
        terminalreporter.write_line(line)
