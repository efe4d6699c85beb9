"""Shows the image's build time and size in the test run's summary, where CI's log keeps them."""

from __future__ import annotations

from typing import Any

from tests.support.figures import FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in FIGURES:
        terminalreporter.write_line(line)
