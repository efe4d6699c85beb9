"""The container test's measured figures (build time, size): ``tests/containers/conftest.py`` reports them, and
``tests/conftest.py`` prints them in the run's summary."""

from __future__ import annotations

FIGURES: list[str] = []
