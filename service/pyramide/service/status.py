"""A game's status as the service states it: the one enum of the API, and the only module that spells its values.

The engine decides ``in_progress``, ``won`` and ``stuck`` once (:meth:`pyramide.engine.Game.outcome`); the stored
game layers ``abandoned`` over it once (:attr:`pyramide.service.games.stored_game.StoredGame.status`). Game lists
and challenge attempts say ``lost`` where a snapshot says ``stuck``, and the statistics count a result as ``won`` or
``lost`` (stuck or abandoned): those words are members here too, so the schema has one status enum, each field
documenting the members it carries.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Literal

from pyramide.engine import Status


class GameStatus(StrEnum):
    """A game's status on the wire. Snapshots carry `in_progress`, `won`, `stuck` or `abandoned`; game lists and
    challenge attempts carry `lost` instead of `stuck`."""

    IN_PROGRESS = "in_progress"
    WON = "won"
    STUCK = "stuck"
    LOST = "lost"
    ABANDONED = "abandoned"

    @classmethod
    def of(cls, status: Status) -> GameStatus:
        """The engine's status as the service states it."""
        return _ENGINE[status]

    @property
    def final(self) -> bool:
        """Won or abandoned: kept for good and never changed again (a stuck game can still be undone)."""
        return self is GameStatus.WON or self is GameStatus.ABANDONED

    @property
    def decided(self) -> bool:
        """Won, stuck or abandoned: the game's result stands and the statistics count it."""
        return self is not GameStatus.IN_PROGRESS

    @property
    def listed(self) -> GameStatus:
        """The status as game lists and challenge attempts show it: ``lost`` for ``stuck``."""
        return GameStatus.LOST if self is GameStatus.STUCK else self


_ENGINE: Final[dict[Status, GameStatus]] = {
    Status.IN_PROGRESS: GameStatus.IN_PROGRESS,
    Status.WON: GameStatus.WON,
    Status.STUCK: GameStatus.STUCK,
}

ListFilter = Literal["all", "in_progress", "won", "lost", "abandoned"]
"""Which of a player's games a list shows: all, or those whose listed status is one of these."""
