"""What ``/metrics`` shows, sample by sample."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient


def metric_values(client: TestClient[Any]) -> dict[str, float]:
    """Every sample ``/metrics`` shows, by its name with labels."""
    lines = client.get("/metrics").text.splitlines()
    return {line.rpartition(" ")[0]: float(line.rpartition(" ")[2]) for line in lines if line[:1] != "#"}
