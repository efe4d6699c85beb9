"""Service settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DAY_S = 24 * 3600


@dataclass(frozen=True, slots=True)
class Settings:
    redis_url: str | None = None
    """``REDIS_URL``; without it ``pyramide serve`` starts the embedded Redis."""
    redis_cluster: bool = False
    """``REDIS_CLUSTER=1``: talk to a Redis Cluster (keys already carry hash tags)."""
    redis_timeout_s: float = 2.0
    """``PYRAMIDE_REDIS_TIMEOUT_S``: how long a Redis command may take before the request answers 503."""
    data_dir: Path = field(default_factory=lambda: Path("data"))
    """``PYRAMIDE_DATA_DIR``: where the embedded Redis keeps its files."""
    unfinished_ttl_s: int = 30 * DAY_S
    """``PYRAMIDE_UNFINISHED_TTL_S``: an unfinished game expires this long after its last change."""
    idempotency_ttl_s: int = DAY_S
    """``PYRAMIDE_IDEMPOTENCY_TTL_S``: how long a response is kept for retries with the same Idempotency-Key."""
    solver_time_limit_s: float = 5.0
    """``PYRAMIDE_SOLVER_TIME_LIMIT_S``: how long a hint or a deal analysis may search."""
    conflict_retries: int = 5
    """How often a move that lost a race (no If-Match) is tried again on the fresh state before 409."""
    settlement_grace_s: float = 30.0
    """``PYRAMIDE_SETTLEMENT_GRACE_S``: a game whose statistics are still pending this long after its change was
    saved is taken for one whose request died, and settled when its player's statistics are read."""

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(
            redis_url=env.get("REDIS_URL") or None,
            redis_cluster=env.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes"),
            redis_timeout_s=float(env.get("PYRAMIDE_REDIS_TIMEOUT_S", 2.0)),
            data_dir=Path(env.get("PYRAMIDE_DATA_DIR", "data")),
            unfinished_ttl_s=int(env.get("PYRAMIDE_UNFINISHED_TTL_S", 30 * DAY_S)),
            idempotency_ttl_s=int(env.get("PYRAMIDE_IDEMPOTENCY_TTL_S", DAY_S)),
            solver_time_limit_s=float(env.get("PYRAMIDE_SOLVER_TIME_LIMIT_S", 5.0)),
            settlement_grace_s=float(env.get("PYRAMIDE_SETTLEMENT_GRACE_S", 30.0)),
        )
