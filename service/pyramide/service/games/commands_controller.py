"""How the game routes turn a request into a domain value and a reply into a response: the new game a create asks
for, the command a move, tap or abandon carries (with the versions its If-Match accepts), and the snapshot sent
back with its headers; :func:`act`, the one path of every route that changes a game (its address's allowance of
moves included); and :func:`move_body`, a move as the request that plays it, for clients replaying a record."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID

from litestar import Request, Response
from litestar.datastructures import State
from pydantic import TypeAdapter

from pyramide.engine import DRAW, RECYCLE, UNDO, DealCode, Move, RemoveKing, RemovePair, Rules, card_code, parse_card
from pyramide.engine.moves import parse_move
from pyramide.service.accounts import Player
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.commands import Abandon, Command, Tap, Versions
from pyramide.service.games.commands import Move as MoveCommand
from pyramide.service.games.creation import NewGame
from pyramide.service.games.dependencies import GameWrites
from pyramide.service.games.replies import Reply
from pyramide.service.games.schemas import (
    CardTap,
    ChallengeGameBody,
    CodeGameBody,
    CreateGameBody,
    DrawMove,
    KingMove,
    LayoutGameBody,
    MoveBody,
    PairMove,
    RecycleMove,
    Snapshot,
    TapBody,
    UndoMove,
)
from pyramide.service.http.body import fingerprint, parse_body
from pyramide.service.http.headers import idempotency_key, if_match, locale_of
from pyramide.service.http.responses import EncodedJson

_MOVE: TypeAdapter[MoveBody] = TypeAdapter(MoveBody)
_TAP: TypeAdapter[TapBody] = TypeAdapter(TapBody)

PlayerRequest = Request[Player, str, State]


def send(
    reply: Reply, game_id: UUID, response: type[Response[Any]] = Response, limit: tuple[str, str] | None = None
) -> Response[Snapshot]:
    """The snapshot as serialised once (and kept as such for idempotent retries), its version as the ETag, in the
    caller's language (``Vary: Accept-Language``); for a game just dealt, 201 with its location; for an answer
    replayed from an Idempotency-Key, ``Idempotent-Replayed: true``; with ``limit``, the RateLimit headers."""
    body: Any = reply.body
    headers = {"ETag": f'"{reply.version}"', "Content-Language": reply.locale, "Vary": "Accept-Language"}
    if reply.created:
        headers["Location"] = f"/v1/games/{game_id}"
    if reply.replayed:
        headers["Idempotent-Replayed"] = "true"
    if limit is not None:
        headers["RateLimit-Policy"], headers["RateLimit"] = limit
    return response(body, status_code=201 if reply.created else 200, media_type="application/json", headers=headers)


async def act(
    request: PlayerRequest,
    game_id: UUID,
    writes: GameWrites,
    command_of: Callable[[PlayerRequest], Awaitable[Command]],
) -> Response[Snapshot]:
    """Carry out the request's command; the client's address is refused (429) past its allowance of moves (or of
    keyed moves, for one with an Idempotency-Key), and counted when the command succeeded (what was refused stored
    nothing); a keyed move counts as one only when it kept one response more for its game (what grows Redis)."""
    allowance = writes.allowance
    key = idempotency_key(request)
    address = allowance.admit(request, key is not None)
    player = request.user
    command = await command_of(request)
    reply = await writes.play.act(
        player=player,
        game_id=game_id,
        command=command,
        locale=locale_of(request, player.locale),
        idempotency_key=key,
        fingerprint=await fingerprint(request) if key else "",
    )
    return send(reply, game_id, EncodedJson, allowance.count(address, reply.kept_more))


async def move_command(request: PlayerRequest) -> Command:
    body: MoveBody = await parse_body(request, _MOVE)
    move = move_from_body(body)
    return MoveCommand(move, _expected(request))


async def tap_command(request: PlayerRequest) -> Command:
    body = await parse_body(request, _TAP)
    return Tap(parse_card(body.card) if isinstance(body, CardTap) else None, _expected(request))


async def abandon_command(request: PlayerRequest) -> Command:
    return Abandon(_expected(request))


def _expected(request: PlayerRequest) -> Versions:
    """The versions the request's ``If-Match`` accepts."""
    versions = if_match(request)
    return None if versions is None else frozenset(versions)


def new_game(body: CreateGameBody) -> NewGame:
    """What a create request asks to deal."""
    if isinstance(body, ChallengeGameBody):
        return NewGame(challenge=body.challenge, explain_errors=body.explain_errors)
    if isinstance(body, CodeGameBody):
        return NewGame(DealCode.parse(body.code), explain_errors=body.explain_errors)
    if isinstance(body, LayoutGameBody):
        deal = DealCode.from_json(body.layout.model_dump(exclude_none=True))
        return NewGame(deal, explain_errors=body.explain_errors)
    rules = Rules() if body.rules is None else Rules.from_json(body.rules.model_dump())
    return NewGame(rules=rules, winnable_only=body.winnable_only, explain_errors=body.explain_errors)


def move_from_body(body: PairMove | KingMove | DrawMove | RecycleMove | UndoMove | str | object) -> Move:
    """The engine's move for a parsed move body (an object, or the notation ``legal_moves`` lists, such as
    ``"2S+JH"`` or ``"D"``); a body of no known kind is 422 ``validation_failed``, never a draw (the schema's union
    refuses one first; this holds if a kind is ever added there and not here)."""
    if isinstance(body, str):
        return parse_move(body)
    if isinstance(body, PairMove):
        first, second = (parse_card(c) for c in body.cards)
        return RemovePair(first, second)
    if isinstance(body, KingMove):
        return RemoveKing(parse_card(body.card))
    if isinstance(body, RecycleMove):
        return RECYCLE
    if isinstance(body, UndoMove):
        return UNDO
    if isinstance(body, DrawMove):
        return DRAW
    raise DomainError(ErrorCode.VALIDATION_FAILED)


def move_body(move: Move) -> dict[str, object]:
    """The request body for ``move``: the inverse of :func:`move_from_body`, for clients replaying a record."""
    if isinstance(move, RemovePair):
        return {"type": "pair", "cards": [card_code(c) for c in move.cards]}
    if isinstance(move, RemoveKing):
        return {"type": "king", "card": card_code(move.card)}
    return {"type": {DRAW: "draw", RECYCLE: "recycle", UNDO: "undo"}[move]}
