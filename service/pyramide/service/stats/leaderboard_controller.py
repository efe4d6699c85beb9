"""Leaderboards per deal code: public, like the deal itself."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Controller, Response, get
from litestar.params import QueryParameter
from litestar.response import Stream

from pyramide.engine import DealCode
from pyramide.service.accounts import PlayerStore, bearer_player
from pyramide.service.deals import Par, ParBook, ParStatus, par_shown
from pyramide.service.deals.schemas import RuleSet
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
from pyramide.service.http.params import DealCodeText, deal_code_of
from pyramide.service.http.responses import problems, revalidated
from pyramide.service.http.streams import BoardEvent, LiveStreams, StreamEvent, encoded, stream_response
from pyramide.service.stats.leaderboards import Leaderboards
from pyramide.service.stats.rankings import Page
from pyramide.service.stats.schemas import Leaderboard, LeaderboardEntry

BoardOrder = Annotated[
    Literal["rules", "par"],
    QueryParameter(
        required=False,
        description="`rules` (default): the rules document's order; `par`: by `over_par`, fewest moves over the"
        " deal's par first (ties in the rules document's order). `rank` follows the order asked for.",
    ),
]

_BOARD_EVENT = {"id": "7", "event": "board", "data": '{"code": "…", "entries": […], …}'}


class LeaderboardController(Controller):
    path = "/v1/leaderboards"
    tags = ["statistics"]

    @get(
        "/{code:str}",
        operation_id="getLeaderboard",
        if_none_match=True,
        summary="The wins on a deal code, each player's best once: clean wins first, then fastest, fewest moves and"
        " the earlier finish",
        description="Each entry carries the deal's `par` and `over_par` once the par is known (worked out off the"
        " request path, like `getDeal`'s). Wins without an undo or a hint (`tier: clean`) rank before every other"
        " (`assisted`); `identity`"
        " filters app players' or anonymous players' entries. Unverified (`verified: false`): anyone with an open"
        " code can know its cards, so a program can top this board. The daily challenges' boards"
        " (`getChallengeLeaderboard`) are the verified ones.",
        responses=problems(400, 401, 409, 422),
        security=[{}, {"bearerAuth": []}],
        exclude_from_auth=True,
    )
    async def board(
        self,
        request: AnyRequest,
        code: DealCodeText,
        leaderboards: Injected[Leaderboards],
        pars: Injected[ParBook],
        players: Injected[PlayerStore],
        *,
        limit: Limit = DEFAULT_LIMIT,
        cursor: BoardCursor = None,
        identity: IdentityFilter = None,
        order: BoardOrder = "rules",
        around: AroundFilter = None,
    ) -> Response[Leaderboard]:
        check_paging_query(request, "identity", "order", "around")
        deal = deal_code_of(code)
        rank, percentile = None, None
        if around == "me":
            caller = await bearer_player(request, players)
            if caller is None:
                raise DomainError(ErrorCode.UNAUTHORIZED)
            page, rank, percentile = await leaderboards.around(str(deal), caller.id, identity)
        else:
            read = leaderboards.page_by_moves if order == "par" else leaderboards.page
            page = await read(str(deal), cursor, limit, identity)
        board = leaderboard(deal, page, await pars.par(deal), rank, percentile)
        return revalidated(request, board)

    @get(
        "/{code:str}/events",
        operation_id="streamLeaderboard",
        stream=True,
        summary="A deal code's board, live: its first page now, then again each time the board changes",
        description="The board's first page as `getLeaderboard` answers it without a query, each time a win enters"
        " or an entry leaves or the deal's par is saved, whichever worker or replica made the change. 429"
        " `too_many_streams` when the client's address has `PYRAMIDE_STREAMS_PER_ADDRESS` streams open.",
        responses={
            **stream_response(BoardEvent, "the board's first page, as `getLeaderboard` answers it", _BOARD_EVENT),
            **problems(400, 409, 422, 429),
        },
        security=[{}],
        exclude_from_auth=True,
    )
    async def events(
        self,
        request: AnyRequest,
        code: DealCodeText,
        leaderboards: Injected[Leaderboards],
        pars: Injected[ParBook],
        streams: Injected[LiveStreams],
    ) -> Stream:
        check_paging_query(request)
        deal = deal_code_of(code)
        name = str(deal)

        async def load() -> StreamEvent:
            par = await pars.par(deal)
            decided = par.status is not ParStatus.PENDING  # else no counter is made: the par's save makes it
            await leaderboards.touch(name, par_shown(par), create=decided)  # a save whose process died before telling
            changes = await leaderboards.changes(name)  # before the page: a change meanwhile comes as a next event
            board = leaderboard(deal, await leaderboards.page(name, None, DEFAULT_LIMIT), par)
            return StreamEvent(changes, "board", encoded(request, board))

        return await streams.open(request, leaderboards.channel(name), ("board", name), load)


def leaderboard(
    deal: DealCode, page: Page, par: Par, rank: int | None = None, percentile: float | None = None
) -> Leaderboard:
    """The board's body: a page of its entries, each with the deal's par."""
    return Leaderboard(
        code=str(deal),
        rules=RuleSet(**deal.rules.to_json()),
        par=par.moves,
        par_status=par.status.value,
        entries=[LeaderboardEntry.model_validate(with_par(e, par.moves)) for e in page.entries],
        next_cursor=page.next_cursor,
        rank=rank,
        percentile=percentile,
    )


def with_par(entry: dict[str, Any], par: int | None) -> dict[str, Any]:
    """A board entry with the deal's par and how many moves over it the win took (both null while not known)."""
    return {**entry, "par": par, "over_par": None if par is None else entry["moves"] - par}
