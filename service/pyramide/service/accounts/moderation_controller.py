"""Moderation's routes under ``/v1/admin``: ban and unban a player, annul one board entry. The caller is the admin
principal (``request.user``): the operator, or an app with the ``moderation`` scope for its own players."""

from __future__ import annotations

import re
from typing import Annotated, Final

from litestar import Controller, Request, Response, delete, post
from litestar.datastructures import State
from litestar.params import Parameter
from pydantic import TypeAdapter

from pyramide.service.accounts.annulments import Annulments
from pyramide.service.accounts.app_players import AppPlayers
from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.bans import Bans
from pyramide.service.accounts.moderation_schemas import REASON_MAX, BanBody, BanState
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.accounts.principal import Principal
from pyramide.service.accounts.privacy import PlayerData
from pyramide.service.boards import challenge_board
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.body import parse_body
from pyramide.service.http.full import OPERATOR, WHILE_FULL
from pyramide.service.http.injection import Injected
from pyramide.service.http.params import IdText, deal_code_of, id_of
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import DEAL_CODE_PATTERN

AdminRequest = Request[Principal, None, State]
BOARD_PATTERN: Final = rf"^(?:{DEAL_CODE_PATTERN[1:-1]}|challenge:[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}-[0-9A-Z]{{1,4}})$"
"""A board's name: a deal code or ``challenge:<id>`` (declared, so that a schema-valid name is one the route reads)."""
BoardText = Annotated[
    str,
    Parameter(
        description="A deal code (e.g. PY1-N-AAAAAAS) or `challenge:<id>`.", schema_extra={"pattern": BOARD_PATTERN}
    ),
]
ReasonQuery = Annotated[str, Parameter(max_length=REASON_MAX, description="Why, for the audit log.")]
_BAN = TypeAdapter(BanBody)
_CHALLENGE: Final = re.compile(r"challenge:([0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9A-Z]{1,4})")
_WHO = "The operator key, or an app key with the `moderation` scope for the app's own players (else 403 `forbidden`)."


def _board(text: str) -> str:
    """A board's name in a path: a deal code (422 ``invalid_deal_code`` when malformed), canonical, or
    ``challenge:<id>`` (404 ``not_found`` when it names no challenge)."""
    if text.startswith("challenge:"):
        named = _CHALLENGE.fullmatch(text)
        if named is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        return challenge_board(named.group(1))
    return str(deal_code_of(text))


class ModerationController(Controller):
    path = "/"
    tags = ["admin"]

    @post(
        "/players/{player_id:str}/ban",
        operation_id="banPlayer",
        kept_answer=True,
        opt={WHILE_FULL: OPERATOR},
        request_body=BanBody,
        summary="Ban a player",
        description="The player's entries leave every board at once (kept with the ban), and its requests answer 403"
        " `player_banned` in every process at once, but its data's export and erasure; its games stop counting. "
        + _WHO,
        responses=problems(400, 401, 403, 404, 413, 422),
        status_code=200,
    )
    async def ban(self, request: AdminRequest, player_id: IdText, bans: Injected[Bans]) -> BanState:
        body = await parse_body(request, _BAN)
        return BanState.model_validate(await bans.ban(request.user, id_of(player_id), body.reason))

    @post(
        "/players/{player_id:str}/unban",
        operation_id="unbanPlayer",
        kept_answer=True,
        opt={WHILE_FULL: OPERATOR},
        request_body=BanBody,
        summary="Lift a player's ban",
        description="The player's token works again at once, and exactly the entries the ban took go back on their"
        " boards (but those annulled meanwhile). A player that is not banned is left as it is. For an app player"
        " erased while banned, the ban its (app, external id) kept is lifted. " + _WHO,
        responses=problems(400, 401, 403, 404, 413, 422),
        status_code=200,
    )
    async def unban(self, request: AdminRequest, player_id: IdText, bans: Injected[Bans]) -> BanState:
        body = await parse_body(request, _BAN)
        return BanState.model_validate(await bans.unban(request.user, id_of(player_id), body.reason))

    @delete(
        "/players/{player_id:str}",
        operation_id="erasePlayerByOperator",
        opt={WHILE_FULL: OPERATOR},
        summary="Erase a player and everything kept about it (operator)",
        description="As `erasePlayer` does for the player itself, for a player that cannot ask through the API any"
        " more (its app was revoked, its token is lost) and asked the operator. An app's player's binding goes"
        " too. 403 `forbidden` for an app's key; 404 `not_found` for no such player. Audited: who erased a player,"
        " when and why, but not which (the erasure takes the player's id out of the audit log too).",
        responses=problems(400, 401, 403, 404),
        status_code=204,
    )
    async def erase(
        self,
        request: AdminRequest,
        player_id: IdText,
        *,
        players: Injected[PlayerStore],
        privacy: Injected[PlayerData],
        app_players: Injected[AppPlayers],
        audit: Injected[AuditLog],
        reason: ReasonQuery = "",
    ) -> Response[None]:
        if not request.user.is_operator:
            raise DomainError(ErrorCode.FORBIDDEN)
        player = await players.get(id_of(player_id))
        if player is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        await privacy.erase(player, None)
        await app_players.unbind(player)
        await audit.record(request.user, "erase", "erased-player", reason)  # the id goes with the player
        return Response(None, status_code=204)

    @delete(
        "/leaderboards/{board:str}/entries/{player_id:str}",
        operation_id="annulLeaderboardEntry",
        opt={WHILE_FULL: OPERATOR},
        summary="Annul one entry of a board",
        description="`board` is a deal code or `challenge:<id>`; the board re-ranks. 404 `not_found` when the player"
        " has no entry there (nor one kept by a ban). " + _WHO,
        responses=problems(401, 403, 404, 422),
        status_code=204,
    )
    async def annul(
        self,
        request: AdminRequest,
        board: BoardText,
        player_id: IdText,
        annulments: Injected[Annulments],
        reason: ReasonQuery = "",
    ) -> Response[None]:
        await annulments.annul(request.user, _board(board), id_of(player_id), reason)
        return Response(None, status_code=204)
