"""A game as the service stores it: the engine's bytes behind a small fixed header.

Header (big-endian): version ``Q`` (first, so that the compare-and-set script can read it with one ``sub``), owner
``16s``, created, first move and finished times in ms since the epoch ``QQQ`` (0 for none), flags ``B`` (bit 0:
abandoned). Then :func:`pyramide.engine.dump_game`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from uuid import UUID

from pyramide.engine import Game, InvalidStateError, Status, dump_game, load_game

_HEADER = struct.Struct(">Q16sQQQB")
VERSION_BYTES = 8
ABANDONED = 1


def version_bytes(version: int) -> bytes:
    return version.to_bytes(VERSION_BYTES, "big")


@dataclass(slots=True)
class StoredGame:
    id: UUID
    owner: UUID
    game: Game
    version: int = 0
    created_ms: int = 0
    first_move_ms: int | None = None
    finished_ms: int | None = None
    abandoned: bool = False

    @property
    def finished(self) -> bool:
        """Won or abandoned: kept for good and never changed again. A stuck game can still be undone."""
        return self.abandoned or self.game.status is Status.WON

    def to_bytes(self) -> bytes:
        header = _HEADER.pack(
            self.version,
            self.owner.bytes,
            self.created_ms,
            self.first_move_ms or 0,
            self.finished_ms or 0,
            ABANDONED if self.abandoned else 0,
        )
        return header + dump_game(self.game)

    @classmethod
    def from_bytes(cls, game_id: UUID, data: bytes) -> StoredGame:
        if len(data) < _HEADER.size:
            raise InvalidStateError("the stored game is cut short")
        version, owner, created, first, finished, flags = _HEADER.unpack_from(data)
        return cls(
            id=game_id,
            owner=UUID(bytes=owner),
            game=load_game(data[_HEADER.size :]),
            version=version,
            created_ms=created,
            first_move_ms=first or None,
            finished_ms=finished or None,
            abandoned=bool(flags & ABANDONED),
        )
