"""App players and their sessions.

An app with the ``players`` scope acts for one of its own users by sending its key with ``Pyramide-Player: <external
id>``: the player bound to (app, external id), created on first use. The binding is one key in the app's slot,
``pyr:{app:<id>}:player:<SHA-256 of the external id>``, holding the player's id; the player itself is an ordinary
player (``players``) with its app, the app's name and the external id in its hash, and a random token that no one is
given, whose hash the app's requests carry (see :meth:`PlayerStore.insert_bound`).

Each request with an app key reads the app's hash and the binding in one script: a revoked app (its hash deleted) is
refused by every process from the next request on. On the routes whose store checks the player's token on every
change (a move, a tap, an abandon), a process takes the app and binding it checked lately from memory instead, while it
hears every app's changes (``accounts.app_cache``: a revocation still refuses at once).

Concurrent first uses of one external id each create a player;
one is bound (compare-and-set on the binding) and the others delete theirs before answering with it, so no key of a
player no one can reach is left behind. A binding whose player is gone (erased, or expired unplayed) is replaced by a
fresh player on the next use; but a banned player's erasure leaves its binding holding :data:`BANNED_BINDING`
(nothing but the fact of the ban, under the external id's hash): the app's user stays refused 403
``player_banned`` until a moderator lifts it (:meth:`AppPlayers.lift_erased_ban`, found by the erased player's id
through ``pyr:{app:<id>}:erased-ban:<SHA-256 of the player id>``).

A session (``pyrses_<player id, 32 hex>_<secret>``) is a bearer token the app gives its front end for one player: the
SHA-256 of its secret is a field of the player's hash ``pyr:{p:<id>}:sessions``, holding the app's id and when it
expires (after ``session_ttl_s``). A player has at most :data:`SESSIONS_PER_PLAYER` live sessions: issuing one more
drops the oldest, so the hash stays small however often an app asks. Erasing the player deletes it with every other
key of that slot, and a session of a revoked app is refused (its app's hash is read on every request).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Final, NamedTuple
from uuid import UUID

from redis.exceptions import ResponseError

from pyramide.service.accounts.app_cache import AppCache, announce
from pyramide.service.accounts.apps import App, checked, is_current, key_app_id
from pyramide.service.accounts.player import Player
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra import keyspace
from pyramide.service.infra import outbox as outbox_module
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.redis import RedisClient, raw, storage_full
from pyramide.service.infra.scripts import NoKeys, Result, Script

SESSION_PREFIX: Final = "pyrses_"
EXTERNAL_ID: Final = re.compile(r"^[\x21-\x2e\x30-\x7e]{1,128}$")
"""Visible ASCII but ``/``, which no path segment can carry (``createSession`` names the id in its path)."""
SESSIONS_PER_PLAYER: Final = 10
"""Live sessions a player may have at once; issuing one more drops the oldest."""
BANNED_BINDING: Final = "banned"
"""What a binding holds once its banned player was erased: the (app, external id) stays banned."""
_SESSION: Final = re.compile(r"^pyrses_([0-9a-f]{32})_([A-Za-z0-9_-]{40,64})$")
_BIND_TRIES: Final = 3
Creating = Callable[[App], Awaitable[None]]

log = logging.getLogger("pyramide.service")


class ResolveKeys(NamedTuple):
    app: str
    binding: str


_NO_ARGS: Final = NoKeys()
RESOLVE: Final = Script("app_resolve", ResolveKeys, NoKeys)
"""The app's hash and the player bound to an external id, in one round trip (both in the app's slot)."""


class BindingKeys(NamedTuple):
    binding: str


class BindArgs(NamedTuple):
    seen: str
    """What the binding held when the request read it ('' for nothing)."""
    player: str


BIND: Final = Script("app_bind", BindingKeys, BindArgs)
"""Binds the new player only if the binding still holds what this request saw; answers the player bound now."""


class UnbindKeys(NamedTuple):
    binding: str
    outbox: str
    """The app's outbox (``keyspace.app_outbox``): ``player.erased`` outlives the player's slot there."""


class ErasedArgs(NamedTuple):
    player: str
    app: str
    data: str
    """The ``player.erased`` payload: only the ids the app gave or was given (``player_id``, ``external_id``)."""


UNBIND: Final = Script("app_unbind", UnbindKeys, ErasedArgs)
"""Deletes an erased player's binding if it still names it, and emits ``player.erased`` to the app's outbox with
it: the erasure's last step (see :meth:`AppPlayers.unbind`)."""


class SessionKeys(NamedTuple):
    player: str
    sessions: str


class IssueArgs(NamedTuple):
    session: str
    """The SHA-256 of the session's secret."""
    app: str
    expires_ms: int
    now_ms: int
    most: int


ISSUE: Final = Script("app_issue_session", SessionKeys, IssueArgs)
"""A session only for a player that still exists (else :attr:`Result.MISSING`) and is not banned (else
:attr:`Result.UNAUTHORIZED`, nothing written): expired ones go, and the oldest while the player would have more
than ``most``; the hash lives as long as its newest session."""


class BanKeys(NamedTuple):
    binding: str
    note: str
    """The erased ban, under the hash of the player's id."""


class KeepBanKeys(NamedTuple):
    binding: str
    note: str
    outbox: str


class KeepBanArgs(NamedTuple):
    player: str
    banned: str
    digest: str
    """The binding's digest of the external id."""
    app: str
    data: str


KEEP_BAN: Final = Script("app_keep_ban", KeepBanKeys, KeepBanArgs)
"""A banned player's erasure: its binding (if it still names it) keeps only the ban, and the erased ban is noted
under the player id's hash so that its unban finds the binding."""


class LiftArgs(NamedTuple):
    digest: str
    banned: str


LIFT: Final = Script("app_lift_erased_ban", BanKeys, LiftArgs)
"""Lifts an erased player's ban: the binding goes (the user gets a fresh player next time) and so does the note."""


def binding_key(app_id: UUID, external_id: str) -> str:
    return keyspace.app_binding(app_id, hashlib.sha256(external_id.encode()).hexdigest())


def erased_ban_key(app_id: UUID, player_id: UUID) -> str:
    return keyspace.app_erased_ban(app_id, hashlib.sha256(str(player_id).encode()).hexdigest())


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def valid_external_id(external_id: str) -> str:
    """The external id as sent; 400 ``invalid_player_header`` unless it is 1–128 visible ASCII characters."""
    if not EXTERNAL_ID.match(external_id):
        raise DomainError(ErrorCode.INVALID_PLAYER_HEADER)
    return external_id


class AppPlayers:
    """Finds (and creates) the players of apps' users, and issues and checks their sessions."""

    def __init__(
        self, redis: RedisClient, players: PlayerStore, session_ttl_s: int, cache: AppCache | None = None
    ) -> None:
        self.redis = redis
        self.players = players
        self.cache = cache
        self.clock = players.clock
        self.session_ttl_ms = session_ttl_s * 1000
        self._resolve = RESOLVE.load(redis)
        self._bind = BIND.load(redis)
        self._unbind = UNBIND.load(redis)
        self._issue = ISSUE.load(redis)
        self._keep_ban = KEEP_BAN.load(redis)
        self._lift = LIFT.load(redis)

    async def bound_player(self, key: str, external_id: str) -> Player | None:
        """The player bound to the app's user ``external_id`` if there is one (none is created); the key is checked
        as :meth:`act_as` does."""
        app, bound, _ = await self._app_and_binding(key, external_id)
        player = await self.players.load(UUID(bound)) if bound and bound != BANNED_BINDING else None
        return player if player is not None and player.app_id == app.id else None

    async def act_as(
        self, key: str, external_id: str, *, remembered: bool = False, creating: Creating | None = None
    ) -> tuple[App, Player]:
        """The app of ``key`` and its user's player: 401 ``unauthorized`` for a key that is not a valid one's,
        403 ``forbidden`` for an app without the ``players`` scope. ``creating`` is awaited before a player is
        created (the caller's limits: it may refuse). With ``remembered`` (a route whose store checks the token),
        the app and binding this process checked lately may be taken from memory (``accounts.app_cache``)."""
        cache = self.cache if remembered else None
        if cache is not None:
            held = await self._remembered(cache, key, external_id)
            if held is not None:
                return held
        ticket = 0 if cache is None else cache.ticket()
        app, bound, current = await self._app_and_binding(key, external_id)
        player = await self._player(app, external_id, bound, remembered, creating)
        if cache is not None and current:  # a replaced key in its grace is checked in Redis every time: it ends there
            cache.put(ticket, key, app, external_id, player.id)
        return app, player

    async def _remembered(self, cache: AppCache, key: str, external_id: str) -> tuple[App, Player] | None:
        """The app and its user's player from memory, or ``None`` (not remembered, or the player is gone)."""
        held = await cache.get(key, external_id)
        if held is None:
            return None
        app, bound = held
        player = await self.players.load(bound, remembered=True)
        return (app, player) if player is not None and player.app_id == app.id else None

    async def _app_and_binding(self, key: str, external_id: str) -> tuple[App, str, bool]:
        """The app of ``key`` (checked, with its scope), the id bound to ``external_id`` (empty: none), and whether
        the key is the app's current one (not a replaced one in its grace)."""
        app_id = key_app_id(key)
        if app_id is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        binding = binding_key(app_id, external_id)
        flat, bound = await self._resolve(ResolveKeys(app=keyspace.app(app_id), binding=binding), _NO_ARGS)
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        app = checked(key, app_id, fields, now_ms(self.clock))
        if app is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        if "players" not in app.scopes:
            raise DomainError(ErrorCode.FORBIDDEN)
        return app, (raw(bound) or b"").decode(), is_current(key, fields)

    async def _player(
        self, app: App, external_id: str, bound: str, remembered: bool, creating: Creating | None
    ) -> Player:
        """The player bound to ``external_id`` (``bound``: the binding as read), created and bound if there is none
        or it is gone."""
        binding = binding_key(app.id, external_id)
        for _ in range(_BIND_TRIES):
            if bound == BANNED_BINDING:
                raise DomainError(ErrorCode.PLAYER_BANNED)  # its banned player was erased: the user stays banned
            if bound:
                player = await self.players.load(UUID(bound), remembered=remembered)
                if player is not None and player.app_id == app.id:
                    return player
            if creating is not None:
                await creating(app)
            fresh = await self.players.insert_bound(app.id, app.name, external_id)
            now = await self._bind(BindingKeys(binding=binding), BindArgs(seen=bound, player=str(fresh.id)))
            now = (raw(now) or b"").decode()
            if now == str(fresh.id):
                return fresh
            await self.players.discard(fresh.id)  # another request bound its player first
            bound = now
        raise DomainError(ErrorCode.VERSION_CONFLICT)

    async def unbind(self, player: Player) -> None:
        """Delete an erased app player's binding (if it still names it): its external id gets a fresh player. A
        banned player's binding keeps the ban instead (see the module).

        This is the erasure's last step, in the app's slot, and it emits ``player.erased`` to the app's outbox in the
        same script: the player's own outbox goes with the player, and no script can write both slots. So the event
        is written only once the player's keys are gone (never for an erasure that did not happen), exactly once
        (the binding no longer names the player the second time), and with the binding's change (together or not
        at all). Its payload holds only the ids the app gave or was given."""
        if player.app_id is None or player.external_id is None:
            return
        binding = binding_key(player.app_id, player.external_id)
        outbox = keyspace.app_outbox(player.app_id)
        data = json.dumps({"player_id": str(player.id), "external_id": player.external_id})
        app, who = str(player.app_id), str(player.id)
        if not player.banned:
            await self._unbind(UnbindKeys(binding=binding, outbox=outbox), ErasedArgs(who, app, data))
        else:
            digest = binding.rsplit(":", 1)[1]
            keys = KeepBanKeys(binding=binding, note=erased_ban_key(player.app_id, player.id), outbox=outbox)
            await self._keep_ban(keys, KeepBanArgs(who, BANNED_BINDING, digest, app, data))
        if self.cache is not None:
            self.cache.forget(player.app_id)
        await announce(self.redis, player.app_id)  # every process forgets the binding it may remember
        try:
            await outbox_module.mark_due(self.redis, outbox, now_ms(self.clock))
        except ResponseError as error:  # erased all the same; the outbox sweep marks the event due later
            if not storage_full(error):
                raise
            log.warning("Redis is full: an erased player's event waits for the outbox sweep")

    async def lift_erased_ban(self, app_id: UUID, player_id: UUID) -> bool:
        """Lift the ban an erased player of ``app_id`` left on its binding; whether there was one."""
        note = erased_ban_key(app_id, player_id)
        digest = (raw(await self.redis.get(note)) or b"").decode()
        if not digest:
            return False
        keys = BanKeys(binding=keyspace.app_binding(app_id, digest), note=note)
        return bool(await self._lift(keys, LiftArgs(digest=digest, banned=BANNED_BINDING)) == Result.OK)

    async def issue_session(self, app: App, external_id: str, creating: Creating | None = None) -> tuple[str, datetime]:
        """A session token for the app's user ``external_id`` (its player created on first use, as
        :meth:`act_as`) and when it expires; 403 ``player_banned`` for a banned user, with nothing written (the
        script checks the ban again, for one that lands meanwhile)."""
        binding = binding_key(app.id, external_id)
        bound = (raw(await self.redis.get(binding)) or b"").decode()
        player = await self._player(app, external_id, bound, False, creating)
        if player.banned:
            raise DomainError(ErrorCode.PLAYER_BANNED)
        secret = secrets.token_urlsafe(32)
        expires_ms = now_ms(self.clock) + self.session_ttl_ms
        keys = SessionKeys(player=keyspace.player(player.id), sessions=keyspace.sessions(player.id))
        args = IssueArgs(
            session=_digest(secret),
            app=str(app.id),
            expires_ms=expires_ms,
            now_ms=expires_ms - self.session_ttl_ms,
            most=SESSIONS_PER_PLAYER,
        )
        issued = await self._issue(keys, args)
        if issued == Result.UNAUTHORIZED:
            raise DomainError(ErrorCode.PLAYER_BANNED)  # banned while the session was being issued
        if issued != Result.OK:
            raise DomainError(ErrorCode.VERSION_CONFLICT)  # erased while the session was being issued
        return f"{SESSION_PREFIX}{player.id.hex}_{secret}", datetime.fromtimestamp(expires_ms / 1000, UTC)

    async def session_player(self, token: str) -> Player | None:
        """The player of a session token, or ``None`` for one that is malformed, unknown, expired, of a revoked app
        or of an erased player."""
        match = _SESSION.match(token)
        if match is None:
            return None
        player_id = UUID(hex=match.group(1))
        kept = (raw(await self.redis.hget(keyspace.sessions(player_id), _digest(match.group(2)))) or b"").decode()
        app, _, expires = kept.partition(" ")
        if not app or int(expires) <= now_ms(self.clock) or not await self.redis.exists(keyspace.app(UUID(app))):
            return None
        player = await self.players.load(player_id)
        if player is None or player.app_id is None or not hmac.compare_digest(str(player.app_id), app):
            return None
        return player
