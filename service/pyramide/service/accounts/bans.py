"""Bans: a moderator takes a player off every board at once and refuses its requests in every process, and may
lift the ban, which puts back exactly the entries it took.

The ban is one script in the player's slot (:data:`BAN`): the flag in the player's settings, which
every route that reads the player from Redis sees, and the ban in place of the token hash that every game script
compares, so the move route refuses at once in every process without a round trip of its own. Then the player's
entries are kept with the ban and leave their boards (``stats.Leaderboards.set_aside``). A win racing the ban is
taken off its board again by its own settlement, which sees the flag when it records the win
(``games.settlement``). Banning again finishes a ban that a crash interrupted.

An app player erased while banned leaves the ban on its app's binding (``app_players``): the same (app, external
id) stays 403 ``player_banned``. Unbanning the erased player's id (the operator, or its app with ``moderation``)
lifts it there, audited like any unban; the user then gets a fresh player."""

from __future__ import annotations

from typing import Any, Final, NamedTuple
from uuid import UUID

from pyramide.service.accounts.app_players import AppPlayers
from pyramide.service.accounts.apps import AppStore
from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.player import Player
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.accounts.ports import PlayerBoards
from pyramide.service.accounts.principal import Principal
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra import keyspace
from pyramide.service.infra import outbox as outbox_module
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.redis import raw
from pyramide.service.infra.scripts import Result, Script


class BanKeys(NamedTuple):
    player: str
    auth: str
    tombstone: str
    outbox: str
    """The player's outbox: an app player's ban emits ``player.banned`` there, with the change."""


class BanArgs(NamedTuple):
    at_ms: int
    mark: bytes
    """:data:`BANNED`, in place of the token hash."""
    actor: str
    by_operator: str
    player: str
    reason: str
    """The moderator's reason, in the event (empty: ``null``)."""


BAN: Final = Script("player_ban", BanKeys, BanArgs)
"""Bans a player that exists and is not being erased: the flag in its settings (read by every route that reads
the player from Redis) and :data:`BANNED` in place of its token hash (compared by every game script, so the move
route refuses at once in every process, at no extra cost). The ban remembers who imposed it (``banned_by``): the
first banner, unless the operator bans again, who then owns it. Answers who owns the ban now
(:attr:`Result.MISSING`: no such player)."""


class UnbanKeys(NamedTuple):
    player: str
    auth: str
    outbox: str
    """The player's outbox: lifting an app player's ban emits ``player.banned`` (``banned`` false) there."""


class UnbanArgs(NamedTuple):
    actor: str
    by_operator: str
    player: str
    at_ms: int
    reason: str


UNBAN: Final = Script("player_unban", UnbanKeys, UnbanArgs)
"""Lifts a ban, when the caller may: the operator any ban, an app only one it imposed itself (a ban with no
``banned_by``, from before it was kept, is the operator's). The flag goes and the player's current token hash is
back where the game scripts compare it: :attr:`Result.OK`; :attr:`Result.UNCHANGED` when it was not banned;
:attr:`Result.MISSING`; :attr:`Result.FORBIDDEN` when it is not the caller's ban to lift."""


BANNED: Final = b"banned"
"""What ``keyspace.auth`` holds while the player is banned: never the hash of a token (64 hex digits)."""


async def moderated_player(players: PlayerStore, actor: Principal, player_id: UUID) -> Player:
    """The player ``actor`` means to act on: 404 ``not_found`` when there is none, 403 ``forbidden`` when the actor
    may not moderate it (an app: only its own players, and only with the ``moderation`` scope)."""
    player = await players.get(player_id)
    if player is None:
        raise DomainError(ErrorCode.NOT_FOUND)
    if not actor.may_moderate(player.app_id):
        raise DomainError(ErrorCode.FORBIDDEN)
    return player


class Bans:
    def __init__(
        self, players: PlayerStore, boards: PlayerBoards, audit: AuditLog, apps: AppStore, app_players: AppPlayers
    ) -> None:
        self.players = players
        self.clock = players.clock
        self.redis = players.redis
        self._ban_script = BAN.load(players.redis)
        self._unban_script = UNBAN.load(players.redis)
        self.boards = boards
        self.audit = audit
        self.apps = apps
        self.app_players = app_players

    async def ban(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Ban the player: its entries leave every board and its requests are 403 ``player_banned``; audited with
        the boards it left. The ban remembers who imposed it (an app's ban the operator repeats becomes the
        operator's)."""
        await moderated_player(self.players, actor, player_id)
        at_ms = now_ms(self.clock)
        owner = await self._ban_player(player_id, at_ms, actor.actor, by_operator=actor.is_operator, reason=reason)
        if owner is None:
            raise DomainError(ErrorCode.NOT_FOUND)  # erased meanwhile
        removed = await self.boards.set_aside(player_id)
        detail = {"boards": " ".join(removed), "banned_by": owner}
        await self.audit.record(actor, "ban", f"player:{player_id}", reason, detail)
        return {"player_id": player_id, "banned": True, "banned_by": owner, "boards": removed}

    async def unban(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Lift the player's ban: its token works again and the entries the ban kept go back on their boards;
        audited with those boards and who had imposed it. The operator lifts any ban, an app only one it imposed
        (403 ``forbidden``). A player that is not banned is left as it is (and nothing is audited). An app player
        erased while banned: the ban its binding kept is lifted (by the operator only: who imposed it went with the
        player)."""
        if await self.players.get(player_id) is None:
            return await self._unban_erased(actor, player_id, reason)
        player = await moderated_player(self.players, actor, player_id)
        lifted = await self._unban_player(player_id, actor.actor, by_operator=actor.is_operator, reason=reason)
        if lifted is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        if not lifted:
            return {"player_id": player_id, "banned": False, "banned_by": None, "boards": []}
        restored = await self.boards.restore(player_id)
        detail = {"boards": " ".join(restored), "banned_by": player.banned_by or "operator"}
        await self.audit.record(actor, "unban", f"player:{player_id}", reason, detail)
        return {"player_id": player_id, "banned": False, "banned_by": None, "boards": restored}

    async def _unban_erased(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Lift the ban an erased app player left on its binding (the operator only: 403 ``forbidden`` for an app);
        404 ``not_found`` when there is none. Audited without the erased player's id."""
        if not actor.is_operator:
            raise DomainError(ErrorCode.FORBIDDEN)
        for app in await self.apps.list():
            if await self.app_players.lift_erased_ban(app.id, player_id):
                await self.audit.record(actor, "unban", "erased-player", reason, {"erased": "yes"})
                return {"player_id": player_id, "banned": False, "banned_by": None, "boards": []}
        raise DomainError(ErrorCode.NOT_FOUND)

    async def _ban_player(
        self, player_id: UUID, at_ms: int, actor: str, *, by_operator: bool, reason: str = ""
    ) -> str | None:
        """Ban the player in every process at once (see :data:`BANNED`) on behalf of ``actor`` (``operator`` or
        ``app:<id>``); who owns the ban now, ``None`` when there is no such player (or it is being erased). Banning
        again changes nothing but the moment (and the owner, when the operator bans)."""
        outbox = keyspace.player_outbox(player_id)
        keys = BanKeys(
            player=keyspace.player(player_id),
            auth=keyspace.auth(player_id),
            tombstone=keyspace.tombstone(player_id),
            outbox=outbox,
        )
        operator = "1" if by_operator else "0"
        args = BanArgs(at_ms, BANNED, actor, operator, str(player_id), reason)
        owner = await self._ban_script(keys, args)
        self.players.forget(player_id)
        if owner != Result.MISSING:
            # an app player's first ban emitted player.banned
            await outbox_module.mark_due(self.redis, outbox, now_ms(self.clock))
        return None if owner == Result.MISSING else (raw(owner) or b"operator").decode()

    async def _unban_player(self, player_id: UUID, actor: str, *, by_operator: bool, reason: str = "") -> bool | None:
        """Lift the player's ban: true when it was banned, false when it was not, ``None`` when there is no such
        player; 403 ``forbidden`` when ``actor`` is an app that did not impose it. Its current token works again at
        once in every process."""
        outbox = keyspace.player_outbox(player_id)
        keys = UnbanKeys(player=keyspace.player(player_id), auth=keyspace.auth(player_id), outbox=outbox)
        at_ms = now_ms(self.clock)
        args = UnbanArgs(actor, "1" if by_operator else "0", str(player_id), at_ms, reason)
        answer = Result(int(await self._unban_script(keys, args)))
        self.players.forget(player_id)
        if answer is Result.OK:
            # lifting an app player's ban emitted player.banned
            await outbox_module.mark_due(self.redis, outbox, now_ms(self.clock))
        if answer is Result.FORBIDDEN:
            raise DomainError(ErrorCode.FORBIDDEN)
        return None if answer is Result.MISSING else answer is Result.OK
