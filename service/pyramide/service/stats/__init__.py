"""Statistics and leaderboards: what each player's finished games add up to, and the wins ranked per deal and per
daily challenge."""

from pyramide.service.boards import challenge_board
from pyramide.service.stats.fairness import Cadence, FairPlay, HoldReason, Verdict
from pyramide.service.stats.leaderboards import Leaderboards
from pyramide.service.stats.results import GameResult
from pyramide.service.stats.reviews import Reviews
from pyramide.service.stats.statistics import StatsStore

__all__ = [
    "Cadence",
    "FairPlay",
    "GameResult",
    "HoldReason",
    "Leaderboards",
    "Reviews",
    "StatsStore",
    "Verdict",
    "challenge_board",
]
