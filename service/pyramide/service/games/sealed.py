"""What the games domain needs of daily challenges: the sealed deal a challenge game is dealt, and noting who took
part. The challenges domain provides it (``challenges.ChallengeDeals``); games know only this protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from pyramide.engine import DealCode


@dataclass(frozen=True, slots=True)
class SealedDeal:
    """An open challenge's deal: its code stays on the server until ``closes_ms``."""

    challenge: str
    code: DealCode
    closes_ms: int


class SealedDeals(Protocol):
    async def open_deal(self, challenge: str) -> SealedDeal:
        """The deal of an open challenge; ``DomainError`` ``challenge_not_found``, ``challenge_closed`` or
        ``challenge_not_ready`` otherwise."""
        ...

    async def joined(self, challenge: str, game: UUID) -> None:
        """``game`` is an attempt at ``challenge`` (counted once however often it is noted)."""
        ...
