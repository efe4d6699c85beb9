"""Service settings, read once from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyramide.service.ratelimit import Limit

DAY_S = 24 * 3600


@dataclass(frozen=True, slots=True)
class Limits:
    """Requests per minute: per client address for ``players`` (creating players) and ``analyses`` (the public
    solver route); per player for ``games`` (creating games), ``moves`` (moves, taps, abandons) and ``hints``.
    Far above what a person playing reaches; far below what a script flooding the service sends. 0: no limit."""

    players: int = 120
    analyses: int = 30
    games: int = 60
    moves: int = 600
    hints: int = 30

    def limit(self, name: str) -> Limit:
        return Limit(name, int(getattr(self, name)), 60)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        defaults = cls()
        return cls(**{
            name: int(env.get(f"PYRAMIDE_LIMIT_{name.upper()}", getattr(defaults, name)))
            for name in ("players", "analyses", "games", "moves", "hints")
        })  # fmt: skip

    @classmethod
    def unlimited(cls) -> Limits:
        return cls(0, 0, 0, 0, 0)


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

    player_idle_ttl_s: int = 30 * DAY_S
    """``PYRAMIDE_PLAYER_IDLE_TTL_S``: a player that has never finished a game is deleted this long after its last
    request; one that has finished a game is kept."""
    analysis_ttl_s: int = 7 * DAY_S
    """``PYRAMIDE_ANALYSIS_TTL_S``: how long a deal's analysis is kept for repeats (decided or out of time)."""
    solver_workers: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) - 1))
    """``PYRAMIDE_SOLVER_WORKERS``: solver worker processes (default: cores - 1, at least 1)."""
    solver_queue: int = 8
    """``PYRAMIDE_SOLVER_QUEUE``: solver requests that may wait for a worker; past that, 503 ``solver_busy``."""
    redis_maxmemory: str = "1gb"
    """``PYRAMIDE_REDIS_MAXMEMORY``: the embedded Redis's memory limit; a write past it is refused (507), never an
    eviction."""
    header_timeout_s: float = 10.0
    """``PYRAMIDE_HEADER_TIMEOUT_S``: a connection whose request headers are not complete this long after they
    began (or after it opened) is closed."""
    trusted_proxy_header: str | None = None
    """``PYRAMIDE_TRUSTED_PROXY_HEADER``: e.g. ``X-Forwarded-For``; its last address is taken as the client's.
    Only set it behind a proxy that writes that header: otherwise any client could choose its own address."""
    limits: Limits = field(default_factory=Limits)
    """``PYRAMIDE_LIMIT_<NAME>``: requests per minute, 0 for none (see :class:`Limits`)."""

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
            player_idle_ttl_s=int(env.get("PYRAMIDE_PLAYER_IDLE_TTL_S", 30 * DAY_S)),
            analysis_ttl_s=int(env.get("PYRAMIDE_ANALYSIS_TTL_S", 7 * DAY_S)),
            solver_workers=int(env.get("PYRAMIDE_SOLVER_WORKERS", max(1, (os.cpu_count() or 2) - 1))),
            solver_queue=int(env.get("PYRAMIDE_SOLVER_QUEUE", 8)),
            redis_maxmemory=env.get("PYRAMIDE_REDIS_MAXMEMORY", "1gb"),
            header_timeout_s=float(env.get("PYRAMIDE_HEADER_TIMEOUT_S", 10.0)),
            trusted_proxy_header=env.get("PYRAMIDE_TRUSTED_PROXY_HEADER") or None,
            limits=Limits.from_env(env),
        )
