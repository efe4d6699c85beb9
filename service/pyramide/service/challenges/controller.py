"""Daily challenges: public to read (with a token, the caller's attempt too); played through ``POST /v1/games``."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from litestar import Controller, Response, get
from litestar.params import Parameter, QueryParameter
from litestar.response import Stream

from pyramide.service.accounts import AppPlayers, PlayerStore, bearer_player
from pyramide.service.challenges.schemas import Challenge, ChallengeCalendar, ChallengeLeaderboard
from pyramide.service.challenges.service import ChallengeService
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.body import AnyRequest
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import (
    DEFAULT_LIMIT,
    AroundFilter,
    BoardCursor,
    IdentityFilter,
    Limit,
    check_paging_query,
)
from pyramide.service.http.responses import problems, revalidated
from pyramide.service.http.schemas import CHALLENGE_ID_PATTERN
from pyramide.service.http.streams import BoardEvent, LiveStreams, StreamEvent, encoded, stream_response

ChallengeBoardOrder = Annotated[
    Literal["rules", "par"],
    QueryParameter(
        required=False,
        description="`rules` (default): the rules document's order; `par`: by `over_par`, fewest moves over the"
        " deal's par first, ties in the rules document's order. Within one deal `over_par` is `moves` minus one"
        " par, so this is the order of `moves`: the same while the challenge is sealed, when `par` and `over_par`"
        " stay null and the order tells nothing of the par. `rank` follows the order asked for.",
    ),
]
ChallengeIdPath = Annotated[
    str,
    Parameter(description="The challenge's id, e.g. 2026-12-01-N.", schema_extra={"pattern": CHALLENGE_ID_PATTERN}),
]
PresetQuery = Annotated[
    str,
    QueryParameter(
        description="The rule preset's segment (see `listRules`); default N.",
        pattern=r"^[0-9A-Z]{1,4}$",
        max_length=4,
    ),
]
_PRIVATE = {"Cache-Control": "private, no-store"}
_EVENT = {"id": "4", "event": "board", "data": '{"challenge": "…", "final": false, "entries": […], …}'}
"""Its ``you`` and its counts are the caller's and the moment's: no cache may keep it."""


class ChallengeController(Controller):
    path = "/v1/challenges"
    tags = ["challenges"]

    @get(
        "/",
        operation_id="listChallenges",
        summary="The challenge calendar: each day's challenges with their commitments",
        description="Every challenge chosen from `from` to `to` (UTC days, both included; default today and the"
        " days chosen ahead, 31 days a page, `next_from` giving the next). Each shows its commitment from the moment"
        " it was chosen, at least 7 days ahead, and after its close the code and nonce that open it:"
        " SHA-256(`<code>:<nonce>`) equals the commitment (see `docs/fair-play.md`).",
        responses=problems(400),
        exclude_from_auth=True,
    )
    async def calendar(
        self,
        request: AnyRequest,
        challenges: Injected[ChallengeService],
        first: Annotated[date | None, QueryParameter(name="from", description="The first UTC day.")] = None,
        last: Annotated[date | None, QueryParameter(name="to", description="The last UTC day.")] = None,
    ) -> Response[ChallengeCalendar]:
        check_paging_query(request, "from", "to")
        found = await challenges.calendar(first, last)
        return Response(ChallengeCalendar.model_validate(found), headers={"Cache-Control": "no-cache"})

    @get(
        "/current",
        operation_id="getCurrentChallenge",
        app_player=True,
        security=[{}, {"bearerAuth": []}],
        summary="Today's daily challenge under a rule preset",
        description="One deal per preset per UTC day, the same for everyone, proven winnable; play it once with"
        ' `POST /v1/games {"challenge": id}`. With a bearer token, `you` is the caller\'s attempt.',
        responses=problems(400, 403, 404, 503),
        exclude_from_auth=True,
    )
    async def current(
        self,
        request: AnyRequest,
        challenges: Injected[ChallengeService],
        players: Injected[PlayerStore],
        app_players: Injected[AppPlayers],
        rules: PresetQuery = "N",
    ) -> Response[Challenge]:
        check_paging_query(request, "rules")
        player = await bearer_player(request, players, app_players)
        found = await challenges.current(rules, player)
        return Response(Challenge.model_validate(found), headers=_PRIVATE)

    @get(
        "/{challenge_id:str}",
        operation_id="getChallenge",
        app_player=True,
        security=[{}, {"bearerAuth": []}],  # public; with a token, `you` is the caller's attempt (issue 59, D4)
        summary="A daily challenge: its commitment from the moment it is chosen, its code and nonce once closed",
        description="Today's, earlier ones that were played, and coming ones already chosen (at least 7 days"
        " ahead): a coming one shows only its commitment and cannot be played before its day.",
        responses=problems(400, 403, 404, 503),
        exclude_from_auth=True,
    )
    async def read(
        self,
        request: AnyRequest,
        challenge_id: ChallengeIdPath,
        challenges: Injected[ChallengeService],
        players: Injected[PlayerStore],
        app_players: Injected[AppPlayers],
    ) -> Response[Challenge]:
        check_paging_query(request)
        player = await bearer_player(request, players, app_players)
        found = await challenges.read(challenge_id, player)
        return Response(Challenge.model_validate(found), headers=_PRIVATE)

    @get(
        "/{challenge_id:str}/leaderboard",
        operation_id="getChallengeLeaderboard",
        if_none_match=True,
        summary="A daily challenge's wins: clean wins first, then fastest, fewest moves and the earlier finish",
        description="Verified: the cards were sealed and hints refused while it was open; only wins before the close"
        " rank. Wins without an undo (`tier: clean`) rank before every other (`assisted`); a win faster than"
        " `PYRAMIDE_MIN_MOVE_MS` per move waits for a moderator's review, and with `PYRAMIDE_CHALLENGE_PLAYERS=app`"
        " only app players' wins rank. `identity` filters app players' or anonymous players' entries. Final once the"
        " challenge has closed. `around=me` (bearer token): the caller's entry and up to 5 entries above and below,"
        " with the caller's `rank` and `percentile`. The deal's `par` and each entry's `over_par` show after the"
        " close only; `order=par` ranks by `over_par` (by moves).",
        responses=problems(400, 401, 404),
        security=[{}, {"bearerAuth": []}],
        exclude_from_auth=True,
    )
    async def leaderboard(
        self,
        request: AnyRequest,
        challenge_id: ChallengeIdPath,
        challenges: Injected[ChallengeService],
        players: Injected[PlayerStore],
        app_players: Injected[AppPlayers],
        *,
        limit: Limit = DEFAULT_LIMIT,
        cursor: BoardCursor = None,
        identity: IdentityFilter = None,
        order: ChallengeBoardOrder = "rules",
        around: AroundFilter = None,
    ) -> Response[ChallengeLeaderboard]:
        check_paging_query(request, "identity", "order", "around")
        caller = None
        if around == "me":
            player = await bearer_player(request, players, app_players)
            if player is None:
                raise DomainError(ErrorCode.UNAUTHORIZED)
            caller = player.id
        board = await challenges.leaderboard(challenge_id, cursor, limit, identity, caller, order=order)
        return revalidated(request, ChallengeLeaderboard.model_validate(board))

    @get(
        "/{challenge_id:str}/leaderboard/events",
        operation_id="streamChallengeLeaderboard",
        stream=True,
        summary="A daily challenge's board, live: its first page now, then again each time the board changes",
        description="The board's first page as `getChallengeLeaderboard` answers it without a query (while the"
        " challenge is open: no code, no par), each time a win enters or an entry leaves, when the challenge closes"
        " (`final`) and when its deal's par is saved after the close, whichever worker or replica made the change."
        " 429 `too_many_streams` when the client's address has `PYRAMIDE_STREAMS_PER_ADDRESS` streams open.",
        responses={
            **stream_response(BoardEvent, "the board's first page, as `getChallengeLeaderboard` answers it", _EVENT),
            **problems(400, 404, 429),
        },
        security=[{}],
        exclude_from_auth=True,
    )
    async def leaderboard_events(
        self,
        request: AnyRequest,
        challenge_id: ChallengeIdPath,
        challenges: Injected[ChallengeService],
        streams: Injected[LiveStreams],
    ) -> Stream:
        check_paging_query(request)

        async def load() -> StreamEvent:
            changes = await challenges.board_changes(challenge_id)  # before the page: a later change comes next
            board = await challenges.leaderboard(challenge_id, None, DEFAULT_LIMIT)
            return StreamEvent(changes, "board", encoded(request, ChallengeLeaderboard.model_validate(board)))

        channel = challenges.board_channel(challenge_id)
        return await streams.open(request, channel, ("challenge", challenge_id), load)
