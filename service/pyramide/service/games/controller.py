"""Games: create, read, move, tap, record, abandon."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from litestar import Controller, Response, get, post
from litestar.params import FromPath
from pydantic import TypeAdapter

from pyramide.engine.moves import format_record
from pyramide.engine.moves import parse_move as _parse_move
from pyramide.service.games.service import (
    GameService,
    Reply,
    abandon_action,
    move_from_body,
    parse_if_match,
    play_action,
    reply_for,
    tap_action,
)
from pyramide.service.http.requests import (
    AnyRequest,
    current_player,
    fingerprint,
    header_value,
    idempotency_key,
    locale_of,
    parse_body,
)
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import CreateGameBody, GameRecord, Hint, MoveBody, RulesBody, Snapshot, TapBody

_CREATE: TypeAdapter[CreateGameBody] = TypeAdapter(CreateGameBody)
_MOVE: TypeAdapter[MoveBody] = TypeAdapter(MoveBody)
_TAP: TypeAdapter[TapBody] = TypeAdapter(TapBody)
_IF_MATCH = (
    " Send `If-Match` with the ETag to act only on that version (412 otherwise); without it a request that loses"
    " a race is retried on the fresh state, then answered 409 `version_conflict`."
)


def _send(reply: Reply) -> Response[Snapshot]:
    """The snapshot as serialised once (and kept as such for idempotent retries)."""
    body: Any = reply.body
    return Response(body, status_code=reply.status, media_type="application/json", headers=reply.headers)


class GameController(Controller):
    path = "/v1/games"
    tags = ["games"]

    @post(
        "/",
        operation_id="createGame",
        summary="Deal a new game",
        description='`{}` deals a random game (optionally under `rules`), `{"code": …}` a pasted deal code,'
        ' `{"layout": …}` a layout chosen by hand.',
        responses=problems(400, 401, 409, 413, 422, 429),
    )
    async def create(self, request: AnyRequest) -> Response[Snapshot]:
        player = await current_player(request)
        key = idempotency_key(request)
        body = await parse_body(request, _CREATE)
        service: GameService = request.app.state.games
        reply = await service.create(
            player,
            body,
            locale_of(request, player),
            key,
            await fingerprint(request) if key else "",
        )
        return _send(reply)

    @get("/{game_id:uuid}", operation_id="getGame", summary="A game's snapshot", responses=problems(401, 404))
    async def read(self, request: AnyRequest, game_id: FromPath[UUID]) -> Response[Snapshot]:
        player = await current_player(request)
        service: GameService = request.app.state.games
        stored = await service.load(player, game_id)
        return _send(reply_for(stored, locale_of(request, player), None))

    @post(
        "/{game_id:uuid}/moves",
        operation_id="playMove",
        summary="Play an explicit move",
        description="A pair, a king, a draw, a turn-over (`recycle`) or an undo." + _IF_MATCH,
        responses=problems(400, 401, 404, 409, 412, 413, 422, 429),
        status_code=200,
    )
    async def move(self, request: AnyRequest, game_id: FromPath[UUID]) -> Response[Snapshot]:
        return await self._act(request, game_id, "move")

    @post(
        "/{game_id:uuid}/taps",
        operation_id="tap",
        summary="Tap a card or the stock, as in the app",
        description="Returns the snapshot with `feedback`: what the app would say." + _IF_MATCH,
        responses=problems(400, 401, 404, 409, 412, 413, 422, 429),
        status_code=200,
    )
    async def tap(self, request: AnyRequest, game_id: FromPath[UUID]) -> Response[Snapshot]:
        return await self._act(request, game_id, "tap")

    @post(
        "/{game_id:uuid}/abandon",
        operation_id="abandonGame",
        summary="Give a game up",
        description="The game counts as played and lost; it cannot be played on." + _IF_MATCH,
        responses=problems(400, 401, 404, 409, 412, 413, 429),
        status_code=200,
    )
    async def abandon(self, request: AnyRequest, game_id: FromPath[UUID]) -> Response[Snapshot]:
        return await self._act(request, game_id, "abandon")

    @get(
        "/{game_id:uuid}/hint",
        operation_id="getHint",
        summary="The next move of the best line, and whether the game can still be won",
        description="The solver runs in a worker process with a time limit: `winnable` is null when it ran out.",
        responses=problems(401, 404, 409, 429),
    )
    async def hint(self, request: AnyRequest, game_id: FromPath[UUID]) -> Hint:
        player = await current_player(request)
        service: GameService = request.app.state.games
        return Hint.model_validate(await service.hint(player, game_id))

    @get(
        "/{game_id:uuid}/record",
        operation_id="getGameRecord",
        summary="Every operation in order, in move notation",
        responses=problems(401, 404),
    )
    async def record(self, request: AnyRequest, game_id: FromPath[UUID]) -> GameRecord:
        player = await current_player(request)
        service: GameService = request.app.state.games
        stored = await service.load(player, game_id)
        moves = [_parse_move(m) for m in await service.store.record(player.id, game_id)]
        return GameRecord(
            id=game_id,
            code=str(stored.game.code),
            rules=RulesBody(**stored.game.rules.to_json()),
            moves=[m.notation() for m in moves],
            record=format_record(moves),
        )

    async def _act(self, request: AnyRequest, game_id: UUID, kind: str) -> Response[Snapshot]:
        player = await current_player(request)
        key = idempotency_key(request)
        if kind == "move":
            move: MoveBody = await parse_body(request, _MOVE)
            action = play_action(move_from_body(move))
        elif kind == "tap":
            action = tap_action(await parse_body(request, _TAP))
        else:
            action = abandon_action
        service: GameService = request.app.state.games
        reply = await service.act(
            player=player,
            game_id=game_id,
            action=action,
            locale=locale_of(request, player),
            if_match=parse_if_match(header_value(request, b"if-match")),
            idempotency_key=key,
            fingerprint=await fingerprint(request) if key else "",
        )
        return _send(reply)
