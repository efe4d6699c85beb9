"""Statistics and leaderboards: what each player's finished games add up to, and the wins ranked per deal and per
daily challenge."""

from pyramide.service.stats.fairness import Cadence, FairPlay, Verdict
from pyramide.service.stats.leaderboards import Leaderboards, boards_key
from pyramide.service.stats.results import GameResult, challenge_board
from pyramide.service.stats.reviews import Reviews
from pyramide.service.stats.statistics import (
    BANNED,
    ERASED,
    FOLLOW_PLAYER_LUA,
    StatsStore,
    pending_key,
    player_key,
    stats_keys,
    tombstone_key,
)

__all__ = [
    "BANNED",
    "ERASED",
    "FOLLOW_PLAYER_LUA",
    "Cadence",
    "FairPlay",
    "GameResult",
    "Leaderboards",
    "Reviews",
    "StatsStore",
    "Verdict",
    "boards_key",
    "challenge_board",
    "pending_key",
    "player_key",
    "stats_keys",
    "tombstone_key",
]
