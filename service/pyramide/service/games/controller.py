"""Games: create, read, stream, move, tap, abandon, hint, record, review, replay a position: the routes of one
game (``/v1/games``), declared here in one controller (Litestar orders a controller's routes by name, which is the
OpenAPI document's order). What a request becomes and what a reply is sent as is in ``commands_controller``; the
caller's list of games is served with the rest of ``/v1/players`` (``players.games_controller``)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import QueryParameter
from litestar.response import Stream
from pydantic import TypeAdapter

from pyramide.engine import Move
from pyramide.engine.moves import format_record
from pyramide.service.accounts import AppPlayers, PlayerStore, bearer_player
from pyramide.service.deals import Par, ParBook
from pyramide.service.deals.schemas import RuleSet
from pyramide.service.games.commands_controller import (
    PlayerRequest,
    abandon_command,
    act,
    move_command,
    new_game,
    send,
    tap_command,
)
from pyramide.service.games.creation import GameCreation
from pyramide.service.games.dependencies import GameWrites
from pyramide.service.games.hints import GameHints
from pyramide.service.games.reading import GameReading
from pyramide.service.games.review import GameReviews
from pyramide.service.games.schemas import (
    CreateGameBody,
    GameRecord,
    GameReview,
    Hint,
    MoveBody,
    Position,
    Snapshot,
    TapBody,
)
from pyramide.service.games.snapshots import par_fields, shown_code
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.http.body import fingerprint, parse_body
from pyramide.service.http.headers import idempotency_key, if_none_match, locale_of, none_match
from pyramide.service.http.injection import Injected
from pyramide.service.http.limits import AddressLimits, rate_limit_headers
from pyramide.service.http.params import GameIdText, StepText, game_id_of, step_of
from pyramide.service.http.responses import not_modified, problems, revalidated
from pyramide.service.http.streams import LiveStreams, SnapshotEvent, StreamEvent, stream_response
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.settings import LimitName

_CREATE: TypeAdapter[CreateGameBody] = TypeAdapter(CreateGameBody)
_IF_MATCH = (
    " Send `If-Match` with the ETag to act only on that version (412 otherwise); without it a request that loses"
    " a race is retried on the fresh state, then answered 409 `version_conflict`."
)
_APP_ONLY = (
    " With `PYRAMIDE_CHALLENGE_PLAYERS=app`, 403 `app_player_required` for an anonymous player's game of a daily"
    " challenge that is still open (its cards are an app player's to see)."
)
_SNAPSHOT_EVENT = {"id": "3", "event": "snapshot", "data": '{"id": "…", "version": 3, …}'}


class GameController(Controller):
    """The game routes."""

    path = "/v1/games"
    tags = ["games"]

    @post(
        "/",
        operation_id="createGame",
        snapshot=True,
        location=True,
        store_checks_token=True,
        request_body=CreateGameBody,
        summary="Deal a new game",
        description='`{}` deals a random game (optionally under `rules`), `{"code": …}` a pasted deal code,'
        ' `{"layout": …}` a layout chosen by hand, `{"challenge": …}` the caller\'s one attempt at an open daily'
        " challenge (404 `challenge_not_found`, 409 `challenge_already_played` or `challenge_closed`; with"
        " `PYRAMIDE_CHALLENGE_PLAYERS=app`, 403 `app_player_required` for an anonymous player). 409"
        " `too_many_unfinished_games` when the player already has `PYRAMIDE_MAX_UNFINISHED_GAMES` unfinished games;"
        " 429 `quota_exceeded` when the client's address has created `PYRAMIDE_QUOTA_GAMES` games in a day,"
        " 429 `rate_limited` when it has created `PYRAMIDE_LIMIT_ADDRESS_GAMES` in a minute.",
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429, 503),
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def create(
        self,
        request: PlayerRequest,
        creation: Injected[GameCreation],
        address_limits: Injected[AddressLimits],
        pars: Injected[ParBook],
    ) -> Response[Snapshot]:
        player = request.user
        key = idempotency_key(request)
        body = await parse_body(request, _CREATE)
        fp = await fingerprint(request) if key else ""
        async with address_limits.quota(request, LimitName.GAMES, limit=LimitName.ADDRESS_GAMES):
            new = new_game(body)
            game_id, reply = await creation.create(player, new, locale_of(request, player.locale), key, fp)
        if reply.created and new.deal is not None:  # a chosen deal's code is shared: its par serves everyone
            await pars.see(new.deal)  # a random deal's waits for a read that shows it (docs/par.md)
        return send(reply, game_id)

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        snapshot=True,
        if_none_match=True,
        summary="A game's snapshot",
        description="With `If-None-Match` naming the game's version (its ETag), 304 while the snapshot is the one"
        " held: a game not started yet. A game whose clock runs (`elapsed_ms` grows) is always the whole 200, with"
        " the same ETag while no move is made; so is a finished game, whose deal's `par` appears without a new"
        " version (`par_status` `pending`, then settled)." + _APP_ONLY,
        responses=problems(400, 401, 403, 404),
    )
    async def read(
        self, request: PlayerRequest, game_id: GameIdText, games: Injected[GameReading]
    ) -> Response[Snapshot]:
        tags = if_none_match(request)
        game = game_id_of(game_id)
        reply, unchanging = await games.read(request.user, game, locale_of(request, request.user.locale))
        etag = f'"{reply.version}"'
        if unchanging and not none_match(tags, etag):
            return not_modified(etag, {"Content-Language": reply.locale, "Vary": "Accept-Language"})
        return send(reply, game)

    @get(
        "/{game_id:str}/events",
        operation_id="streamGame",
        stream=True,
        summary="A game's live stream: its snapshot now, then each new version",
        description="For a second device or a spectator view of the owner's: the game's snapshot (as `getGame`"
        " answers it) each time its version changes, whichever worker or replica the change was made on."
        " `EventSource` cannot send the Authorization header: read it with `fetch()`. 429 `too_many_streams` when"
        " the client's address has `PYRAMIDE_STREAMS_PER_ADDRESS` streams open, or the player"
        " `PYRAMIDE_STREAMS_PER_PLAYER` game streams." + _APP_ONLY,
        responses={
            **stream_response(SnapshotEvent, "the game's snapshot, as `getGame` answers it", _SNAPSHOT_EVENT),
            **problems(400, 401, 403, 404, 429),
        },
    )
    async def events(
        self,
        request: PlayerRequest,
        game_id: GameIdText,
        *,
        games: Injected[GameReading],
        streams: Injected[LiveStreams],
        players: Injected[PlayerStore],
        app_players: Injected[AppPlayers],
    ) -> Stream:
        game, player = game_id_of(game_id), request.user
        locale = locale_of(request, player.locale)

        async def load() -> StreamEvent:
            reply, _ = await games.read(player, game, locale)
            return StreamEvent(reply.version, "snapshot", reply.body)

        async def holds() -> bool:  # a rotated token, an ended session or an erased player ends the stream
            now = await bearer_player(request, players, app_players)
            return now is not None and now.id == player.id

        channel, topic = games.channel(player, game), ("game", game, locale)
        return await streams.open(request, channel, topic, load, player=player.id, holds=holds)

    @post(
        "/{game_id:str}/moves",
        operation_id="playMove",
        snapshot=True,
        if_match=True,
        store_checks_token=True,
        request_body=MoveBody,
        summary="Play an explicit move",
        description="A pair, a king, a draw, a turn-over (`recycle`) or an undo." + _IF_MATCH + _APP_ONLY,
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
        status_code=200,
        rate_limited=True,
    )
    async def move(
        self,
        request: PlayerRequest,
        game_id: GameIdText,
        game_writes: Injected[GameWrites],
    ) -> Response[Snapshot]:
        return await act(request, game_id_of(game_id), game_writes, move_command)

    @post(
        "/{game_id:str}/taps",
        operation_id="tap",
        snapshot=True,
        if_match=True,
        store_checks_token=True,
        request_body=TapBody,
        summary="Tap a card or the stock, as in the app",
        description="Returns the snapshot with `feedback`: what the app would say." + _IF_MATCH + _APP_ONLY,
        responses=problems(400, 401, 403, 404, 409, 413, 422, 429),
        status_code=200,
        rate_limited=True,
    )
    async def tap(
        self,
        request: PlayerRequest,
        game_id: GameIdText,
        game_writes: Injected[GameWrites],
    ) -> Response[Snapshot]:
        return await act(request, game_id_of(game_id), game_writes, tap_command)

    @post(
        "/{game_id:str}/abandon",
        operation_id="abandonGame",
        snapshot=True,
        if_match=True,
        store_checks_token=True,
        summary="Give a game up",
        description="The game counts as played and lost; it cannot be played on." + _IF_MATCH + _APP_ONLY,
        responses=problems(400, 401, 403, 404, 409, 413, 429),
        status_code=200,
        rate_limited=True,
    )
    async def abandon(
        self,
        request: PlayerRequest,
        game_id: GameIdText,
        game_writes: Injected[GameWrites],
    ) -> Response[Snapshot]:
        return await act(request, game_id_of(game_id), game_writes, abandon_command)

    @get(
        "/{game_id:str}/hint",
        operation_id="getHint",
        summary="The next move of the best line, and whether the game can still be won",
        description="The solver runs in a worker process with a time limit: `winnable` is null when it ran out."
        + _APP_ONLY,
        responses=problems(401, 403, 404, 409, 429),
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def hint(self, request: PlayerRequest, game_id: GameIdText, hints: Injected[GameHints]) -> Hint:
        analysis = await hints.hint(request.user, game_id_of(game_id))
        return Hint(**analysis.model_dump(), move=analysis.line[0] if analysis.line else None)

    @get(
        "/{game_id:str}/record",
        operation_id="getGameRecord",
        if_none_match=True,
        summary="Every operation in order, in move notation",
        description="With the deal's code and rules: replaying `record` from `code` reproduces the game." + _APP_ONLY,
        responses=problems(400, 401, 403, 404),
    )
    async def record(
        self, request: PlayerRequest, game_id: GameIdText, games: Injected[GameReading]
    ) -> Response[GameRecord]:
        stored, moves = await games.record(request.user, game_id_of(game_id))
        now = now_ms(games.clock)
        return revalidated(request, _record(stored, moves, now, await games.par(stored, now)))

    @get(
        "/{game_id:str}/review",
        operation_id="getGameReview",
        summary="A finished game's review: every position judged by the solver",
        description="For each step of getGameRecord's `moves` (0: the deal): whether the game could still be won"
        " (null: not decided within the solver's budget) and the fewest moves left; the point of no return; which"
        " operations kept it on a shortest line; with `?from=<step>`, a shortest winning line from that step."
        " Worked out once per game (queued and budgeted like a hint: 503 `solver_busy`, 429"
        " `solver_in_progress`), then kept: a second request answers at once. 409 `game_not_finished` while the"
        " game runs; 409 `hints_not_allowed` for a daily challenge's game until its challenge closes; 404"
        " `step_not_found` for a `from` outside 0 to the record's length. Each request counts against the client"
        " address's limit of analyses, as `analyseDeal` does." + _APP_ONLY,
        responses=problems(400, 401, 403, 404, 409, 429, 503),
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def review(
        self,
        request: PlayerRequest,
        game_id: GameIdText,
        game_reviews: Injected[GameReviews],
        address_limits: Injected[AddressLimits],
        start: Annotated[
            int | None,
            QueryParameter(
                name="from",
                ge=0,
                le=999_999,
                description="A step to continue from.",
                schema_extra={"minimum": 0},  # Litestar leaves a bound of 0 out of the schema
            ),
        ] = None,
    ) -> GameReview:
        await address_limits.check(request, LimitName.ANALYSES)
        body = await game_reviews.review(request.user, game_id_of(game_id), start)
        return GameReview.model_validate(body)

    @get(
        "/{game_id:str}/positions/{step:str}",
        operation_id="getGamePosition",
        if_none_match=True,
        summary="The board after some operations of the record, for a replay",
        description="The position after the first `step` operations of getGameRecord's `moves` (0: the deal),"
        " replayed by the service's engine from the deal: the pyramid, the waste, the stock's count, the score,"
        " the moves and the status then, and the operation that led there. 404 `step_not_found` for a step outside"
        " 0 to the record's length." + _APP_ONLY,
        responses=problems(400, 401, 403, 404),
    )
    async def position(
        self, request: PlayerRequest, game_id: GameIdText, step: StepText, games: Injected[GameReading]
    ) -> Response[Position]:
        position = await games.position(request.user, game_id_of(game_id), step_of(step))
        return revalidated(request, Position.model_validate(position))


def _record(stored: StoredGame, moves: list[Move], now: int, par: Par | None) -> GameRecord:
    """The record of ``stored`` (whose code and par show once they may)."""
    return GameRecord(
        id=stored.id,
        code=shown_code(stored, now),
        challenge=stored.challenge,
        rules=RuleSet(**stored.game.rules.to_json()),
        moves=[m.notation() for m in moves],
        record=format_record(moves),
        **par_fields(stored, par, now),
    )
