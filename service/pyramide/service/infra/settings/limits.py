"""The rate limits, daily quotas and storage caps: :class:`LimitName` names every limit once; each group has one
field per name it bounds (a check at import refuses a name without its field), read as ``limits.per_minute[name]``.
Adding a limit is a member of :class:`LimitName` and its field in :class:`RateLimits` (and its row in
``docs/operations.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum, unique
from functools import cached_property
from typing import Any

from pydantic import Field

from pyramide.service.infra.settings.group import Group

QUOTA_PLAYERS = 300
QUOTA_GAMES = 300
MAX_UNFINISHED_GAMES = 50
APPS = 100
"""An app's own defaults are those of this many addresses."""


@unique
class LimitName(StrEnum):
    """A rate limit, by the name its counters, its ``PYRAMIDE_LIMIT_*`` variable and its RateLimit headers use."""

    PLAYERS = "players"
    ANALYSES = "analyses"
    GAMES = "games"
    MOVES = "moves"
    HINTS = "hints"
    EXPORTS = "exports"
    ADDRESS_MOVES = "address_moves"
    ADDRESS_GAMES = "address_games"
    ADDRESS_KEYED_MOVES = "address_keyed_moves"


class _ByName(Group):
    """A group of counts, one field per :class:`LimitName` it bounds; 0 switches one off."""

    def __getitem__(self, name: LimitName) -> int:
        return self._counts[name]

    def __contains__(self, name: object) -> bool:
        return name in self._counts

    @cached_property
    def _counts(self) -> dict[LimitName, int]:
        return {LimitName(name): int(count) for name, count in self.model_dump().items()}


class RateLimits(_ByName):
    """Requests per minute: per client address for ``players`` (creating players) and ``analyses`` (the public
    solver route); per player for ``games``, ``moves`` (moves, taps, abandons), ``hints`` and ``exports``; per
    client address, of all its players together, for the ``address_*`` ones. Far above what a person playing
    reaches; far below what a script flooding the service sends. An app's request that names its end user's
    address (``Pyramide-Client-IP``) counts per app and address (the app's bucket of it, apart from the clients
    connecting from that address and from other apps), and against the app's own limits too."""

    env_prefix = "PYRAMIDE_LIMIT_"
    players: int = Field(120, ge=0)
    """Players created per minute per client address."""
    analyses: int = Field(30, ge=0)
    """Deal analyses per minute per client address."""
    games: int = Field(60, ge=0)
    """Games created per minute per player."""
    moves: int = Field(600, ge=0)
    """Moves, taps and abandons per minute per player."""
    hints: int = Field(30, ge=0)
    """Hints per minute per player."""
    exports: int = Field(10, ge=0)
    """Data exports per minute per player."""
    address_moves: int = Field(6000, ge=0)
    """Moves, taps and abandons per minute of all the players of one client address together: bounds how fast one
    address grows Redis with moves (``docs/security.md``, Bounded memory). Counted in each process and shared
    through Redis once a second, so an address may get up to a second of its traffic per process past it."""
    address_games: int = Field(60, ge=0)
    """Games created per minute by all the players of one client address together, checked with its daily quota
    of games in one step: bounds how fast one address grows Redis with games, a quota's reset included."""
    address_keyed_moves: int = Field(500, ge=0)
    """Moves with an Idempotency-Key that keep one response more for their game (a game's first
    ``kept_responses_per_game``) per minute of all the players of one client address together: bounds how fast one
    address grows Redis with kept responses. Counted like ``address_moves``; past it, every keyed move of the
    address is refused until the minute ends."""


class Quotas(_ByName):
    """Per client address per day (24 hours from the first): bounds the storage one address takes, where the rate
    limit of the same name bounds only its speed (``docs/security.md``, Bounded memory). Counted per app and
    address for an app's end user, as :class:`RateLimits`."""

    env_prefix = "PYRAMIDE_QUOTA_"
    players: int = Field(QUOTA_PLAYERS, ge=0)
    """Players created per client address per day."""
    games: int = Field(QUOTA_GAMES, ge=0)
    """Games created per client address per day, whichever of its players creates them."""


class AppRateLimits(_ByName):
    """Per app, for its requests that name no ``Pyramide-Client-IP``: in place of the per-address limit of the
    same name, which one address gets."""

    env_prefix = "PYRAMIDE_APP_LIMIT_"
    players: int = Field(APPS * 120, ge=0)
    """App players created per minute."""
    address_games: int = Field(APPS * 60, ge=0)
    """Games created per minute by all its players."""
    address_moves: int = Field(APPS * 6000, ge=0)
    """Moves, taps and abandons per minute."""
    address_keyed_moves: int = Field(APPS * 500, ge=0)
    """Moves that keep one response more, per minute."""


class AppQuotas(_ByName):
    """Per app, as :class:`AppRateLimits`: in place of the per-address quota of the same name."""

    env_prefix = "PYRAMIDE_APP_QUOTA_"
    players: int = Field(APPS * QUOTA_PLAYERS, ge=0)
    """App players created per day."""
    games: int = Field(APPS * QUOTA_GAMES, ge=0)
    """Games created per day."""


class Limits(Group):
    """Every rate limit and daily quota, per address and per app."""

    per_minute: RateLimits = RateLimits()
    per_day: Quotas = Quotas()
    app_per_minute: AppRateLimits = AppRateLimits()
    app_per_day: AppQuotas = AppQuotas()

    def app_limit(self, name: LimitName, overrides: Mapping[str, int]) -> int:
        """An app's own rate limit ``name`` (one of :class:`AppRateLimits`'): its value from ``createApp`` when it
        set one, else the setting."""
        return overrides.get(name, self.app_per_minute[name])

    def app_quota(self, name: LimitName, overrides: Mapping[str, int]) -> int:
        """An app's own daily quota ``name``, as :meth:`app_limit` (``createApp`` names it ``quota_<name>``)."""
        return overrides.get(f"quota_{name}", self.app_per_day[name])


class Caps(Group):
    """What one player or one game may hold at once."""

    max_unfinished_games: int = Field(MAX_UNFINISHED_GAMES, ge=0)
    """Unfinished games a player may have at once; creating one more is 409 ``too_many_unfinished_games``."""
    max_game_operations: int = Field(10_000, ge=0)
    """Operations (moves, draws, undos, taps that change the game) one game records at most; past it 409
    ``game_too_long`` (abandoning is still allowed): one game's record, and so what it stores, is bounded."""
    kept_responses_per_game: int = Field(4, ge=1)
    """Responses kept for Idempotency-Key retries per game: the latest ones (a retry comes right after its lost
    answer); older ones go at once, not after ``idempotency_ttl_s``, so playing fast cannot fill Redis."""


for _group in (RateLimits, Quotas, AppRateLimits, AppQuotas):
    _unnamed = set(_group.model_fields) - set(LimitName)
    if _unnamed or (_group is RateLimits and set(LimitName) - set(_group.model_fields)):
        raise TypeError(f"{_group.__name__}: every field is a LimitName and every LimitName a rate limit")


def no_limits() -> dict[str, Any]:
    """Settings (groups' changes, for ``Settings(**…)`` or :meth:`Group.but`) that switch every rate limit, quota
    and cap off."""
    return {
        "limits": {"per_minute": dict.fromkeys(LimitName, 0), "per_day": dict.fromkeys(Quotas.model_fields, 0)},
        "caps": {"max_unfinished_games": 0, "max_game_operations": 0},
    }
