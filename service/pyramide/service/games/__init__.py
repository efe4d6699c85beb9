"""Games: dealing, playing by moves and taps, undo, hints, the record; stored in Redis with compare-and-set."""

from pyramide.service.games.sealed import SealedDeal, SealedDeals
from pyramide.service.games.service import GameService, summary

__all__ = ["GameService", "SealedDeal", "SealedDeals", "summary"]
