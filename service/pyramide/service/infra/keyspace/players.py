"""A player's keys: everything under its hash tag ``{p:<player id>}`` (its settings and token hash, sessions,
statistics, rate-limit cells, outbox aside), so that one Lua script can check and write them together in one slot;
and the marks an erasure leaves."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Final, NamedTuple
from uuid import UUID

RECENT: Final = 4096
"""Key names kept for the players and games in play: every request names them several times, and ``str(UUID)`` is
not cheap."""


@lru_cache(maxsize=RECENT)
def player_tag(player: UUID | str) -> str:
    """The prefix of every key of one player (its id, or the id as a token spells it): the hash tag puts them all
    in the player's cluster slot."""
    return f"pyr:{{p:{player}}}:"


def player_pattern(player: UUID) -> str:
    """A ``SCAN`` pattern matching every key of the player (what an erasure deletes)."""
    return player_tag(player) + "*"


TOMBSTONE_PATTERN: Final = "pyr:{p:*}:erased"
"""A ``SCAN`` pattern matching every player's :func:`tombstone`."""


def player(player: UUID) -> str:
    """The player's settings and token hash (see ``players``)."""
    return player_tag(player) + "player"


@lru_cache(maxsize=RECENT)
def auth(player: UUID) -> str:
    """The hash of the player's current token (or the ban mark), compared by every script that changes a game."""
    return player_tag(player) + "auth"


def audit(player: UUID) -> str:
    """What was done to the player by operators and apps, for the player's export."""
    return player_tag(player) + "audit"


def tombstone(player: UUID) -> str:
    """Set by an erasure before anything of the player is deleted: every script that writes a key of the player
    checks it first and writes nothing once it is there."""
    return player_tag(player) + "erased"


def sessions(player: UUID) -> str:
    """The player's app sessions (hash of each session's secret: its app and expiry)."""
    return player_tag(player) + "sessions"


def boards(player: UUID) -> str:
    """The leaderboards the player is on."""
    return player_tag(player) + "boards"


def ban_kept(player: UUID) -> str:
    """The player's leaderboard entries taken off while the player is banned, to put back on an unban."""
    return player_tag(player) + "ban:kept"


def player_reviews(player: UUID) -> str:
    """The reviews held for the player's results."""
    return player_tag(player) + "reviews"


def solving(player: UUID) -> str:
    """Marks a solver run the player started, so one player runs one at a time."""
    return player_tag(player) + "solving"


def player_sealed(player: UUID | str, lookup: str) -> str:
    """A sealed response of one of the player's requests (a token rotation), in the player's slot."""
    return player_tag(player) + "sealed:" + lookup


@lru_cache(maxsize=RECENT)
def player_limit(player: UUID, limit: str) -> str:
    """The player's cell of the rate limit ``limit``, in the player's slot so scripts on its games check it."""
    return player_tag(player) + "rl:" + limit


class Statistics(NamedTuple):
    """The keys of one player's statistics."""

    counters: str
    """Games won and lost, streaks, best time and fewest moves, hints (a hash)."""
    games: str
    """The state of each game that counts (a hash: game id to ``playing``, ``won``, ``lost``)."""
    wins: str
    """The player's ranked wins (a sorted set)."""
    win: str
    """Each ranked win's details (a hash)."""
    pending: str
    """The games awaiting settlement (a sorted set by when they started to count)."""


def statistics(player: UUID) -> Statistics:
    tag = player_tag(player)
    return Statistics(tag + "stats", tag + "games", tag + "wins", tag + "win", pending(player))


@lru_cache(maxsize=RECENT)
def pending(player: UUID) -> str:
    """The player's games awaiting settlement; the move route names it on every save."""
    return player_tag(player) + "pending"


def player_streams(player: UUID) -> str:
    """The live streams open on a player's games: a sorted set of stream ids by the ms their lease ends."""
    return player_tag(player) + "streams"


ERASURE_REWRITTEN: Final = "pyr:erasure:rewritten"
"""Until when the append-only file was rewritten after an erasure."""


def erased_token(token: str) -> str:
    """Marks a token whose player was erased, for a retried erasure: named by the token's SHA-256, never by the
    player."""
    return "pyr:erased:" + hashlib.sha256(token.encode()).hexdigest()
