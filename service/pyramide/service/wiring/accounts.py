"""Accounts' objects: players, apps and their players, the audit log, bans, annulments, a player's data. What a
player's erasure and a ban need of the games and the boards comes in from the wiring above (``accounts.ports``)."""

from __future__ import annotations

from dataclasses import dataclass

from pyramide.service.accounts import Annulments, AppPlayers, AppStore, AuditLog, Bans, PlayerData, PlayerStore
from pyramide.service.accounts.app_cache import AppCache
from pyramide.service.accounts.ports import PlayerBoards, PlayerGames, PlayerReviews, PlayerStatistics
from pyramide.service.accounts.rewrites import Rewrites
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.notices import Notices
from pyramide.service.infra.ratelimit import RateLimiter, per_minute
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import LimitName, Settings
from pyramide.service.infra.tasks import TaskRegistry


@dataclass(slots=True)
class Accounts:
    players: PlayerStore
    apps: AppStore
    app_players: AppPlayers
    audit: AuditLog
    bans: Bans
    annulments: Annulments
    privacy: PlayerData

    @classmethod
    def start(
        cls,
        settings: Settings,
        redis: RedisClient,
        limiter: RateLimiter,
        *,
        games: PlayerGames,
        stats: PlayerStatistics,
        boards: PlayerBoards,
        reviews: PlayerReviews,
        clock: Clock,
        tasks: TaskRegistry,
        notices: Notices | None = None,
    ) -> Accounts:
        """``notices``: the process's pub/sub connection, over which a move's app key and binding may be taken from
        memory (``accounts.app_cache``); without it, they are read from Redis on every request."""
        players = PlayerStore(redis, settings.retention, clock=clock)
        audit = AuditLog(redis, clock=clock)
        cache = AppCache(redis, notices, clock)
        apps = AppStore(redis, clock=clock, forget=cache.forget)
        app_players = AppPlayers(redis, players, settings.retention.session_ttl_s, cache)
        privacy = PlayerData(
            redis=redis,
            players=players,
            games=games,
            stats=stats,
            boards=boards,
            reviews=reviews,
            retry_window_s=settings.retention.idempotency_ttl_s,
            limiter=limiter,
            exports_limit=per_minute(LimitName.EXPORTS, settings.limits.per_minute[LimitName.EXPORTS]),
            guard_s=settings.erasure.guard_s,
            rewrites=Rewrites(redis, settings.erasure.rewrite_s, tasks) if settings.erasure.rewrite_s > 0 else None,
            audit=audit,
        )
        return cls(
            players=players,
            apps=apps,
            app_players=app_players,
            audit=audit,
            bans=Bans(players, boards, audit, apps, app_players),
            annulments=Annulments(players, boards, audit),
            privacy=privacy,
        )
