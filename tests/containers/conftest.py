"""The image's build time and size, which the tests put in ``FIGURES``, go to the run's summary (where CI's log keeps
them) as the test's user properties named ``figure``: that way they reach it from a pytest-xdist worker too
(``tests/conftest.py`` prints them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.figures import FIGURES


@pytest.fixture(autouse=True)
def _report_figures(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    request.node.user_properties.extend(("figure", line) for line in FIGURES)
    FIGURES.clear()
