"""The Lua scripts of the game store (``lua/game_*.lua``): their keys and arguments by name, and the save
script's keys for the games in play, cached. What each script does for a game is told by the store's methods that
run it (``store.GameStore``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Final, NamedTuple
from uuid import UUID

from pyramide.service.infra import keyspace
from pyramide.service.infra.ratelimit import Limit
from pyramide.service.infra.scripts import Script

RECENT_GAMES: Final = 4096
"""Games in play whose key names and ids as text are kept (each process's cache)."""


class SaveKeys(NamedTuple):
    """The keys of the save script (``lua/game_save.lua``)."""

    state: str
    record: str
    result: str
    hints: str
    limit: str
    """The player's cell of the ``moves`` limit."""
    all: str
    open: str
    won: str
    abandoned: str
    auth: str
    pending: str
    kept: str
    idempotency: str
    """The response kept for the request's Idempotency-Key (``-`` for none)."""


class SaveArgs(NamedTuple):
    basis: bytes
    """The state the change was made to (written only if Redis still holds it)."""
    state: bytes
    notation: str
    """The operation for the record ('' for none)."""
    ttl_ms: int
    """How long the game is kept (0: for good)."""
    response: bytes
    """The head of the response to keep for the Idempotency-Key (b'' for none)."""
    result: bytes
    game: str
    changed_ms: int
    listed: int
    token: str
    pending_since: int | str


SAVE: Final = Script("game_save", SaveKeys, SaveArgs, constants=("INTERVAL", "BURST", "KEPT_MS", "KEPT", "LONGEST"))
"""Saves a changed game (see :meth:`GameStore.save`). The settings it needs on every call (the moves limit, how
long and how many responses are kept, the longest record) are constants of each store's copy, not arguments:
every argument is encoded again on every move."""


class FinishKeys(NamedTuple):
    """The keys of the script that saves the end of an app player's game and emits its event
    (``lua/game_finish.lua``): the save's and the player's outbox."""

    state: str
    record: str
    result: str
    hints: str
    limit: str
    all: str
    open: str
    won: str
    abandoned: str
    auth: str
    pending: str
    kept: str
    idempotency: str
    outbox: str


class FinishArgs(NamedTuple):
    """The save's arguments and the event's (see ``lua/emit_event.lua``)."""

    basis: bytes
    state: bytes
    notation: str
    ttl_ms: int
    response: bytes
    result: bytes
    game: str
    changed_ms: int
    listed: int
    token: str
    pending_since: int | str
    event_type: str
    event_app: str
    event_player: str
    event_data: str
    """The payload as JSON, but its ``hints``, which the script sets from the game's count."""


FINISH: Final = Script(
    "game_finish", FinishKeys, FinishArgs, constants=("INTERVAL", "BURST", "KEPT_MS", "KEPT", "LONGEST")
)
"""Saves a change that ends an app player's game and appends its event to the player's outbox in the same step."""


class CreateKeys(NamedTuple):
    state: str
    idempotency: str
    limit: str
    """The player's cell of the ``games`` limit."""
    all: str
    open: str
    won: str
    abandoned: str
    auth: str
    attempt: str


class CreateArgs(NamedTuple):
    state: bytes
    ttl_ms: int
    response: bytes
    kept_ms: int
    interval: int
    burst: int
    game: str
    created_ms: int
    token: str
    attempt_ttl_ms: int | str
    max_unfinished: int
    expired_before_ms: int


CREATE: Final = Script("game_create", CreateKeys, CreateArgs)


class HintKeys(NamedTuple):
    hints: str
    hinted: str
    tombstone: str


class HintArgs(NamedTuple):
    version: int
    ttl_ms: int


COUNT_HINT: Final = Script("game_count_hint", HintKeys, HintArgs)
"""One more hint in a game, unless its player is being erased or this version of the game was hinted already."""


def save_keys(moves: Limit) -> Callable[[UUID, UUID], SaveKeys]:
    """The save script's keys for a game with no Idempotency-Key, for a store whose moves limit is ``moves``: cached
    for the games in play, one lookup where a dozen would each hash both ids again."""

    @lru_cache(maxsize=RECENT_GAMES)
    def keys(player: UUID, game: UUID) -> SaveKeys:
        lists = keyspace.game_lists(player)
        return SaveKeys(
            state=keyspace.game_state(player, game),
            record=keyspace.game_record(player, game),
            result=keyspace.game_result(player, game),
            hints=keyspace.game_hints(player, game),
            limit=keyspace.player_limit(player, moves.name),
            all=lists.all,
            open=lists.open,
            won=lists.won,
            abandoned=lists.abandoned,
            auth=keyspace.auth(player),
            pending=keyspace.pending(player),
            kept=keyspace.game_kept(player, game),
            idempotency=keyspace.game_idempotency(player, game, "-"),
        )

    return keys
