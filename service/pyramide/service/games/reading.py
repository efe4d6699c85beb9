"""Reading games: one game, the player's lists of games, a game's record, a player's attempt at a challenge."""

from __future__ import annotations

from typing import Final
from uuid import UUID

from pyramide.engine import Move, parse_move
from pyramide.engine.messages import Locale
from pyramide.service.accounts import Player
from pyramide.service.deals import Par, ParBook
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.access import ChallengeAccess
from pyramide.service.games.positions import position_after
from pyramide.service.games.replies import Reply, reply_for
from pyramide.service.games.snapshots import elapsed_ms, moment, same_every_time, shown_code
from pyramide.service.games.store import GameStore
from pyramide.service.games.store_reads import Listed
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import now_ms
from pyramide.service.status import GameStatus, ListFilter

LISTS: Final[dict[str, Listed | None]] = {
    "all": None,
    GameStatus.IN_PROGRESS: Listed.OPEN,
    GameStatus.LOST: Listed.OPEN,
    GameStatus.WON: Listed.WON,
    GameStatus.ABANDONED: Listed.ABANDONED,
}
"""The list each status is read from; in the open list, in progress and lost are told apart by the game itself."""


def summary(stored: StoredGame, changed_ms: int, now: int) -> dict[str, object]:
    """A game as a list of games shows it at ``now`` (ms)."""
    game = stored.game
    status = stored.status.listed
    return {
        "id": stored.id,
        "code": shown_code(stored, now),
        "challenge": stored.challenge,
        "rules": game.rules.to_json(),
        "status": status,
        "score": game.score,
        "moves": game.moves,
        "elapsed_ms": elapsed_ms(stored, now),
        "created_at": moment(stored.created_ms),
        "updated_at": moment(changed_ms),
        "changed_ms": changed_ms,
    }


class GameReading:
    """A player's games as they stand: another player's game does not exist for them (404, never 403); an open
    challenge's game is shown only to whom ``access`` lets play it (403 ``app_player_required``)."""

    def __init__(self, store: GameStore, pars: ParBook | None = None, access: ChallengeAccess | None = None) -> None:
        self.store = store
        self.pars = pars
        self.access = access or ChallengeAccess()
        self.clock = store.clock

    async def read(self, player: Player, game_id: UUID, locale: Locale) -> tuple[Reply, bool]:
        """The game's snapshot now, and whether every snapshot of its version is that same body
        (:func:`same_every_time`: what a 304 may stand for). Not for a finished game whose par is shown: the par
        appears (and may go back to ``pending`` when its kept answer expires) without a new version, and the ETag
        stays the version that ``If-Match`` takes, so no ETag could tell a body held with the par pending from
        one with it known."""
        stored = await self.load(player, game_id)
        now = now_ms(self.clock)
        par = await self.par(stored, now)
        return reply_for(stored, locale, None, now=now, par=par), same_every_time(stored) and par is None

    async def par(self, stored: StoredGame, now: int) -> Par | None:
        """The par of a finished game's deal as known now (and its work started if nobody has); ``None`` for a
        game that runs, or a challenge game before its close, whose par is never looked up (or started) then."""
        if self.pars is None or not stored.status.decided or stored.sealed(now):
            return None
        return await self.pars.par(stored.game.code, finished=True)

    async def list_games(
        self, player: Player, status: ListFilter, cursor: tuple[int, str] | None, limit: int
    ) -> tuple[list[dict[str, object]], tuple[int, str] | None]:
        """The player's games of ``status`` (``all``, ``in_progress``, ``won``, ``lost``, ``abandoned``), newest
        change first: up to ``limit`` summaries, and where the next page starts (``None`` after the last)."""
        kind = LISTS[status]
        entries: list[dict[str, object]] = []
        position = cursor
        now = now_ms(self.clock)
        while len(entries) <= limit:
            want = limit + 1 - len(entries)
            batch = await self.store.listed(player.id, kind, position, want)
            states = await self.store.states(player.id, [game for game, _ in batch])
            gone = [game for (game, _), state in zip(batch, states, strict=True) if state is None]
            if gone:
                await self.store.unlist(player.id, gone)  # expired since: they drop out of the lists
            for (game, changed), state in zip(batch, states, strict=True):
                entry = None if state is None else summary(StoredGame.from_bytes(UUID(game), state), changed, now)
                if entry is not None and (kind is not Listed.OPEN or entry["status"] == status):
                    entries.append(entry)
            if len(batch) < want:
                break
            position = (batch[-1][1], batch[-1][0])
        if len(entries) <= limit:
            return entries, None
        last = entries[limit - 1]
        return entries[:limit], (int(str(last["changed_ms"])), str(last["id"]))

    async def attempt(self, player: Player, challenge: str) -> tuple[UUID, StoredGame | None] | None:
        """The player's game at a daily challenge: its id and the game (``None`` once it is no longer kept);
        ``None`` when the player did not take part."""
        game_id = await self.store.attempt(player.id, challenge)
        if game_id is None:
            return None
        state = await self.store.read(player.id, game_id)
        return game_id, None if state is None else StoredGame.from_bytes(game_id, state)

    async def record(self, player: Player, game_id: UUID) -> tuple[StoredGame, list[Move]]:
        """The game and every move played in it, in order."""
        stored = await self.load(player, game_id)
        return stored, [parse_move(m) for m in await self.store.record(player.id, game_id)]

    async def position(self, player: Player, game_id: UUID, step: int) -> dict[str, object]:
        """The game's board after ``step`` operations of its record (:func:`position_after`); 404
        ``step_not_found`` past its end."""
        stored, moves = await self.record(player, game_id)
        return position_after(stored, moves, step)

    @staticmethod
    def channel(player: Player, game_id: UUID) -> str:
        """Where a change of the game is announced: its state key's name (``game_save.lua`` publishes on it)."""
        return keyspace.game_state(player.id, game_id)

    async def load(self, player: Player, game_id: UUID) -> StoredGame:
        """The player's game, to read; 404 when the player has no such game, 403 ``app_player_required`` when
        ``access`` keeps its cards from the player."""
        stored = owned(player, game_id, await self.store.read(player.id, game_id))
        self.access.check_sees(player, stored, now_ms(self.clock))
        return stored


def owned(player: Player, game_id: UUID, state: bytes | None) -> StoredGame:
    """The game stored as ``state``, when ``player`` owns it; ``game_not_found`` otherwise."""
    if state is None:
        raise DomainError(ErrorCode.GAME_NOT_FOUND)
    stored = StoredGame.from_bytes(game_id, state)
    if stored.owner != player.id:
        raise DomainError(ErrorCode.GAME_NOT_FOUND)  # not 403: another player's game does not exist for you
    return stored
