"""A game as the service stores it: the engine's bytes behind a small fixed header.

Header (big-endian): version ``Q``, owner ``16s``, created, first move and finished times in ms since the epoch
``QQQ`` (0 for none), flags ``B`` (bit 0: abandoned; bit 1: the game's result is settled in the statistics; bit 3:
a daily challenge's game; bit 4: operation times follow; bit 5: dealt from a chosen deal, a pasted code or a
layout; bit 2 is unused: it marked an undo counter in the header that only the project's first day wrote), then
with bit 3 the moment its challenge closes (ms, ``Q``) and the challenge's id (``B`` length, then ASCII), with bit 4
how many operation times ``I`` and each ``I`` (ms after the first move). Then :func:`pyramide.engine.dump_game`.

Operation times are kept for daily challenge games only (their cadence decides whether a win ranks, see
``stats.fairness``): 4 bytes per move or undo, on the games that need them, and nothing on any other game.
"""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass
from uuid import UUID

from pyramide.engine import Game, InvalidStateError, dump_game, load_game
from pyramide.service.status import GameStatus

_HEADER = struct.Struct(">Q16sQQQB")
_COUNT = struct.Struct(">I")
_CHALLENGE = struct.Struct(">QB")
ABANDONED = 1
SETTLED = 2
CHALLENGE = 8
TIMES = 16
CHOSEN = 32


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
    settled: bool = False
    """Its result (won, or lost: stuck or abandoned) has been recorded for the statistics, once and for good."""
    challenge: str | None = None
    """The daily challenge this game is the player's attempt at, if it is one."""
    sealed_until_ms: int = 0
    """When that challenge closes: until then nothing may reveal the game's deal (see :meth:`sealed`)."""
    chosen: bool = False
    """Dealt from a chosen deal (a pasted code or a layout), not at random nor for a challenge: its code is shared,
    so its par is worked out from the deal on and again when it finishes (``docs/par.md``); a random deal's only
    where someone reads it."""
    times: array[int] | None = None
    """When each operation (move or undo) arrived, in ms after the first move, by the server's clock: kept for a
    challenge game (see :meth:`note_operation`); ``None`` for any other (nothing allocated on their path)."""

    def note_operation(self, now_ms: int) -> None:
        """Keep the arrival time of an operation of a challenge game (after :attr:`first_move_ms` is set)."""
        if self.challenge is not None and self.first_move_ms is not None:
            if self.times is None:
                self.times = array("I")
            self.times.append(max(0, min(now_ms - self.first_move_ms, 0xFFFFFFFF)))

    def sealed(self, now_ms: int) -> bool:
        """A challenge game whose challenge is still open: its deal code, hints and analysis are withheld, since
        they would show the face-down cards."""
        return self.challenge is not None and now_ms < self.sealed_until_ms

    @property
    def status(self) -> GameStatus:
        """``abandoned`` over the engine's outcome: the one statement of a stored game's status (its ``final`` and
        ``decided`` say whether it is kept for good and whether its result stands)."""
        return GameStatus.ABANDONED if self.abandoned else GameStatus.of(self.game.outcome().status)

    @property
    def started(self) -> bool:
        """A move has been made: from then on the game counts in the statistics."""
        return self.first_move_ms is not None

    def to_bytes(self) -> bytes:
        flags = (ABANDONED if self.abandoned else 0) | (SETTLED if self.settled else 0) | (CHOSEN if self.chosen else 0)
        if self.challenge is not None:  # only a challenge game keeps operation times
            flags |= CHALLENGE | (TIMES if self.times else 0)
        header = _HEADER.pack(
            self.version,
            self.owner.bytes,
            self.created_ms,
            self.first_move_ms or 0,
            self.finished_ms or 0,
            flags,
        )
        if self.challenge is not None:
            challenge = self.challenge.encode("ascii")
            header += _CHALLENGE.pack(self.sealed_until_ms, len(challenge)) + challenge
            if self.times:
                header += _COUNT.pack(len(self.times)) + _big_endian(self.times)
        return header + dump_game(self.game)

    @classmethod
    def from_bytes(cls, game_id: UUID, data: bytes) -> StoredGame:
        if len(data) < _HEADER.size:
            raise InvalidStateError("the stored game is cut short")
        version, owner, created, first, finished, flags = _HEADER.unpack_from(data)
        start = _HEADER.size
        challenge, sealed_until = None, 0
        if flags & CHALLENGE:
            if len(data) < start + _CHALLENGE.size:
                raise InvalidStateError("the stored game is cut short")
            sealed_until, size = _CHALLENGE.unpack_from(data, start)
            start += _CHALLENGE.size + size
            challenge = data[start - size : start].decode("ascii", "replace")
        times = None
        if flags & TIMES:
            if len(data) < start + _COUNT.size:
                raise InvalidStateError("the stored game is cut short")
            (count,) = _COUNT.unpack_from(data, start)
            start += _COUNT.size
            times = _times(data[start : start + 4 * count])
            start += 4 * count
        game = load_game(data[start:])
        return cls(
            id=game_id,
            owner=UUID(bytes=owner),
            game=game,
            version=version,
            created_ms=created,
            first_move_ms=first or None,
            finished_ms=finished or None,
            abandoned=bool(flags & ABANDONED),
            settled=bool(flags & SETTLED),
            chosen=bool(flags & CHOSEN),
            challenge=challenge,
            sealed_until_ms=sealed_until,
            times=times,
        )


def _big_endian(times: array[int]) -> bytes:
    if sys.byteorder == "big":
        return times.tobytes()
    swapped = array("I", times)
    swapped.byteswap()
    return swapped.tobytes()


def _times(data: bytes) -> array[int]:
    """Operation times as :meth:`StoredGame.to_bytes` wrote them (big-endian ``I``)."""
    times = array("I")
    if len(data) % 4:
        raise InvalidStateError("the stored game is cut short")
    times.frombytes(data)
    if sys.byteorder == "little":
        times.byteswap()
    return times
