"""What accounts need of the domains above them, as protocols that the wiring (``services``) fills in with theirs:
a player's export and erasure read and delete its games (``games``), statistics, reviews and board entries
(``stats``); a ban and an annulment take entries off the boards. Accounts sit below every domain that names a
player, so they name none of those domains: each protocol states only the calls made here."""

from __future__ import annotations

from typing import Any, Protocol
from uuid import UUID

from pyramide.service.accounts.player import Player
from pyramide.service.status import ListFilter


class PlayerBoards(Protocol):
    """A player's entries on the leaderboards (``stats.Leaderboards``)."""

    async def entries_of(self, player: UUID) -> dict[str, Any]: ...

    async def kept_of(self, player: UUID) -> dict[str, Any]: ...

    async def remove(self, player: UUID, codes: list[str] | None = None) -> int: ...

    async def set_aside(self, player: UUID, codes: list[str] | None = None) -> list[str]: ...

    async def restore(self, player: UUID) -> list[str]: ...

    async def annul(self, code: str, player: UUID) -> bool: ...


class WinsPage(Protocol):
    @property
    def entries(self) -> list[dict[str, Any]]: ...

    @property
    def next_cursor(self) -> str | None: ...


class PlayerStatistics(Protocol):
    """A player's statistics and ranked wins (``stats.StatsStore``)."""

    async def read(self, player: UUID) -> dict[str, Any]: ...

    async def wins(self, player: UUID, cursor: str | None, limit: int) -> WinsPage: ...


class PlayerReviews(Protocol):
    """The reviews of a player's held wins (``stats.Reviews``)."""

    async def forget(self, player: UUID) -> int: ...


class GameRecords(Protocol):
    """A player's stored games (``games.store.GameStore``)."""

    async def settled(self, player: UUID, game_id: UUID) -> tuple[bytes | None, bytes | None, int]: ...

    async def record(self, player: UUID, game_id: UUID) -> list[str]: ...


class PlayerGames(Protocol):
    """A player's games as listed (``games.GameReading``)."""

    @property
    def store(self) -> GameRecords: ...

    async def list_games(
        self, player: Player, status: ListFilter, cursor: tuple[int, str] | None, limit: int
    ) -> tuple[list[dict[str, object]], tuple[int, str] | None]: ...
