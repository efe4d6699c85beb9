"""What the metrics show, sample by sample: read in the test's own process, where a ``TestClient``'s app runs (its
API port has no ``/metrics`` unless ``PYRAMIDE_METRICS_ON_API_PORT``)."""

from __future__ import annotations

from prometheus_client import generate_latest

from pyramide.service.infra.metrics import scrape_registry


def metric_values() -> dict[str, float]:
    """Every sample this process's metrics show, by its name with labels."""
    lines = generate_latest(scrape_registry()).decode().splitlines()
    return {line.rpartition(" ")[0]: float(line.rpartition(" ")[2]) for line in lines if line[:1] != "#"}
