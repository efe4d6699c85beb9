"""Games: create, read, move, tap, record, abandon."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.params import QueryParameter
from pydantic import TypeAdapter

from pyramide.engine.moves import format_record
from pyramide.service.deals.schemas import RulesBody
from pyramide.service.games.bodies import move_from_body
from pyramide.service.games.creation import GameCreation
from pyramide.service.games.hints import GameHints
from pyramide.service.games.play import GamePlay, abandon_action, play_action, tap_action
from pyramide.service.games.reading import GameReading
from pyramide.service.games.replies import Reply
from pyramide.service.games.schemas import (
    CreateGameBody,
    GameRecord,
    GamesPage,
    GameSummary,
    Hint,
    MoveBody,
    Snapshot,
    TapBody,
)
from pyramide.service.games.snapshots import now_ms, shown_code
from pyramide.service.http.body import fingerprint, parse_body
from pyramide.service.http.headers import idempotency_key, if_match, locale_of
from pyramide.service.http.injection import Injected
from pyramide.service.http.limits import AddressLimits, MoveAllowance
from pyramide.service.http.paging import DEFAULT_LIMIT, GamesCursor, Limit, check_paging_query
from pyramide.service.http.params import GameIdText, game_id_of
from pyramide.service.http.responses import problems
from pyramide.service.players import Player

_CREATE: TypeAdapter[CreateGameBody] = TypeAdapter(CreateGameBody)
_MOVE: TypeAdapter[MoveBody] = TypeAdapter(MoveBody)
_TAP: TypeAdapter[TapBody] = TypeAdapter(TapBody)
_IF_MATCH = (
    " Send `If-Match` with the ETag to act only on that version (412 otherwise); without it a request that loses"
    " a race is retried on the fresh state, then answered 409 `version_conflict`."
)


PlayerRequest = Request[Player, str, State]
ListStatus = Literal["all", "in_progress", "won", "lost", "abandoned"]


def _send(reply: Reply, game_id: UUID) -> Response[Snapshot]:
    """The snapshot as serialised once (and kept as such for idempotent retries), its version as the ETag, and
    for a game just dealt, 201 with its location."""
    body: Any = reply.body
    headers = {"ETag": f'"{reply.version}"', "Content-Language": reply.locale}
    if reply.created:
        headers["Location"] = f"/v1/games/{game_id}"
    return Response(body, status_code=201 if reply.created else 200, media_type="application/json", headers=headers)


class GameController(Controller):
    """The game routes; the app serves a subclass bound to its game service (see ``hot_path``)."""

    path = "/v1/games"
    tags = ["games"]

    @staticmethod
    def games() -> GamePlay:
        raise NotImplementedError("served only as bound by hot_path.bind_games")

    @staticmethod
    def allowance() -> MoveAllowance:
        raise NotImplementedError("served only as bound by hot_path.bind_games")

    @post(
        "/",
        operation_id="createGame",
        store_checks_token=True,
        request_body=CreateGameBody,
        summary="Deal a new game",
        description='`{}` deals a random game (optionally under `rules`), `{"code": …}` a pasted deal code,'
        ' `{"layout": …}` a layout chosen by hand, `{"challenge": …}` the caller\'s one attempt at an open daily'
        " challenge (404 `challenge_not_found`, 409 `challenge_already_played` or `challenge_closed`). 409"
        " `too_many_unfinished_games` when the player already has `PYRAMIDE_MAX_UNFINISHED_GAMES` unfinished games;"
        " 429 `quota_exceeded` when the client's address has created `PYRAMIDE_QUOTA_GAMES` games in a day,"
        " 429 `rate_limited` when it has created `PYRAMIDE_LIMIT_ADDRESS_GAMES` in a minute.",
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429, 503),
    )
    async def create(
        self, request: PlayerRequest, creation: Injected[GameCreation], address_limits: Injected[AddressLimits]
    ) -> Response[Snapshot]:
        player = request.user
        key = idempotency_key(request)
        body = await parse_body(request, _CREATE)
        fp = await fingerprint(request) if key else ""
        async with address_limits.quota(request, "games", limit="address_games"):
            game_id, reply = await creation.create(player, body, locale_of(request, player.locale), key, fp)
        return _send(reply, game_id)

    @get("/{game_id:str}", operation_id="getGame", summary="A game's snapshot", responses=problems(401, 403, 404))
    async def read(
        self, request: PlayerRequest, game_id: GameIdText, games: Injected[GameReading]
    ) -> Response[Snapshot]:
        game = game_id_of(game_id)
        return _send(await games.read(request.user, game, locale_of(request, request.user.locale)), game)

    @post(
        "/{game_id:str}/moves",
        operation_id="playMove",
        store_checks_token=True,
        request_body=MoveBody,
        summary="Play an explicit move",
        description="A pair, a king, a draw, a turn-over (`recycle`) or an undo." + _IF_MATCH,
        responses=problems(400, 401, 403, 404, 409, 412, 413, 422, 429),
        status_code=200,
    )
    async def move(self, request: PlayerRequest, game_id: GameIdText) -> Response[Snapshot]:
        return await _act(request, game_id_of(game_id), self.games(), self.allowance(), "move")

    @post(
        "/{game_id:str}/taps",
        operation_id="tap",
        store_checks_token=True,
        request_body=TapBody,
        summary="Tap a card or the stock, as in the app",
        description="Returns the snapshot with `feedback`: what the app would say." + _IF_MATCH,
        responses=problems(400, 401, 403, 404, 409, 412, 413, 422, 429),
        status_code=200,
    )
    async def tap(self, request: PlayerRequest, game_id: GameIdText) -> Response[Snapshot]:
        return await _act(request, game_id_of(game_id), self.games(), self.allowance(), "tap")

    @post(
        "/{game_id:str}/abandon",
        operation_id="abandonGame",
        store_checks_token=True,
        summary="Give a game up",
        description="The game counts as played and lost; it cannot be played on." + _IF_MATCH,
        responses=problems(400, 401, 403, 404, 409, 412, 413, 429),
        status_code=200,
    )
    async def abandon(self, request: PlayerRequest, game_id: GameIdText) -> Response[Snapshot]:
        return await _act(request, game_id_of(game_id), self.games(), self.allowance(), "abandon")

    @get(
        "/{game_id:str}/hint",
        operation_id="getHint",
        summary="The next move of the best line, and whether the game can still be won",
        description="The solver runs in a worker process with a time limit: `winnable` is null when it ran out.",
        responses=problems(401, 403, 404, 409, 429),
    )
    async def hint(self, request: PlayerRequest, game_id: GameIdText, hints: Injected[GameHints]) -> Hint:
        return Hint.model_validate(await hints.hint(request.user, game_id_of(game_id)))

    @get(
        "/{game_id:str}/record",
        operation_id="getGameRecord",
        summary="Every operation in order, in move notation",
        responses=problems(401, 403, 404),
    )
    async def record(self, request: PlayerRequest, game_id: GameIdText, games: Injected[GameReading]) -> GameRecord:
        stored, moves = await games.record(request.user, game_id_of(game_id))
        return GameRecord(
            id=stored.id,
            code=shown_code(stored, now_ms()),
            challenge=stored.challenge,
            rules=RulesBody(**stored.game.rules.to_json()),
            moves=[m.notation() for m in moves],
            record=format_record(moves),
        )


async def _act(
    request: PlayerRequest, game_id: UUID, games: GamePlay, allowance: MoveAllowance, kind: str
) -> Response[Snapshot]:
    """Act on the game; the client's address is refused (429) past its allowance of moves (or of keyed moves, for
    one with an Idempotency-Key), and counted when the act succeeded (what was refused stored nothing); a keyed move
    counts as one only when it kept one response more for its game (what grows Redis)."""
    key = idempotency_key(request)
    address = allowance.admit(request, key is not None)
    player = request.user
    if kind == "move":
        move: MoveBody = await parse_body(request, _MOVE)
        action = play_action(move_from_body(move))
    elif kind == "tap":
        action = tap_action(await parse_body(request, _TAP))
    else:
        action = abandon_action
    reply = await games.act(
        player=player,
        game_id=game_id,
        action=action,
        locale=locale_of(request, player.locale),
        if_match=if_match(request),
        idempotency_key=key,
        fingerprint=await fingerprint(request) if key else "",
    )
    allowance.count(address, reply.kept_more)
    return _send(reply, game_id)


class MyGamesController(Controller):
    """The caller's games, to resume one on another device or after a reinstall."""

    path = "/v1/players/me"
    tags = ["games"]

    @get(
        "/games",
        operation_id="listPlayerGames",
        summary="The caller's games, the latest changed first",
        description="Served from lists kept in the same writes that change a game; expired games drop out.",
        responses=problems(400, 401, 403),
    )
    async def games(
        self,
        request: PlayerRequest,
        games: Injected[GameReading],
        status: Annotated[ListStatus, QueryParameter(description="Which games; default: all.")] = "all",
        limit: Limit = DEFAULT_LIMIT,
        cursor: GamesCursor = None,
    ) -> GamesPage:
        check_paging_query(request, "status")
        changed, _, game = (cursor or "").partition(":")
        after = None if cursor is None else (int(changed), game)
        entries, following = await games.list_games(request.user, status, after, limit)
        next_cursor = None if following is None else f"{following[0]}:{following[1]}"
        return GamesPage(entries=[GameSummary.model_validate(e) for e in entries], next_cursor=next_cursor)
