"""Games: dealing, playing by moves and taps, undo, hints, the record; stored in Redis with compare-and-set."""

from pyramide.service.games.reading import GameReading, summary
from pyramide.service.games.sealed import SealedDeal, SealedDeals

__all__ = ["GameReading", "SealedDeal", "SealedDeals", "summary"]
