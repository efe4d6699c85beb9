"""Leaderboards per deal code: public, like the deal itself."""

from __future__ import annotations

from litestar import Controller, get

from pyramide.service.deals.schemas import RulesBody
from pyramide.service.http.body import AnyRequest
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import DEFAULT_LIMIT, Cursor, Limit, check_paging_query
from pyramide.service.http.params import DealCodeText, deal_code_of
from pyramide.service.http.responses import problems
from pyramide.service.stats.leaderboards import Leaderboards
from pyramide.service.stats.schemas import Leaderboard, LeaderboardEntry


class LeaderboardController(Controller):
    path = "/v1/leaderboards"
    tags = ["statistics"]

    @get(
        "/{code:str}",
        operation_id="getLeaderboard",
        summary="The wins on a deal code, each player's best once: fastest first, then fewest moves, then the"
        " earlier finish",
        description="Unverified (`verified: false`): anyone with an open code can know its cards, so a program can"
        " top this board. The daily challenges' boards (`getChallengeLeaderboard`) are the verified ones.",
        responses=problems(400, 422),
        exclude_from_auth=True,
    )
    async def board(
        self,
        request: AnyRequest,
        code: DealCodeText,
        leaderboards: Injected[Leaderboards],
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> Leaderboard:
        check_paging_query(request)
        deal = deal_code_of(code)
        page = await leaderboards.page(str(deal), cursor, limit)
        return Leaderboard(
            code=str(deal),
            rules=RulesBody(**deal.rules.to_json()),
            entries=[LeaderboardEntry.model_validate(e) for e in page.entries],
            next_cursor=page.next_cursor,
        )
