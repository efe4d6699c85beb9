"""Deals and rules: public, since a deal code is meant to be shared."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get
from litestar.params import QueryParameter

from pyramide.service.accounts import PlayerStore, bearer_player
from pyramide.service.deals.analysis import Solver
from pyramide.service.deals.catalogue import PRESETS, VARIANTS
from pyramide.service.deals.par import ParBook
from pyramide.service.deals.schemas import DealAnalysis, DealLayout, RulePreset, RulesCatalogue, RuleSet, RuleVariant
from pyramide.service.http.body import AnyRequest
from pyramide.service.http.headers import locale_of
from pyramide.service.http.injection import Injected
from pyramide.service.http.limits import AddressLimits, rate_limit_headers
from pyramide.service.http.params import DealCodeText, deal_code_of
from pyramide.service.http.responses import problems, revalidated
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import LimitName, Retention


class DealController(Controller):
    path = "/v1"
    tags = ["deals"]

    @get(
        "/deals/{code:str}",
        operation_id="getDeal",
        if_none_match=True,
        summary="The cards and rules of a deal code",
        description="The pyramid, waste and stock the code deals, and its rules: to preview or share a deal. With"
        " its `par` once worked out: the first read starts the solver on it off the request path (`par_status`"
        " `pending` until it answers).",
        responses=problems(400, 409, 422, 503),
        exclude_from_auth=True,
    )
    async def deal(self, request: AnyRequest, code: DealCodeText, pars: Injected[ParBook]) -> Response[DealLayout]:
        deal = deal_code_of(code)
        par = await pars.par(deal)
        layout = {**deal.to_json(), "par": par.moves, "par_status": str(par.status)}
        return revalidated(request, DealLayout.model_validate(layout))

    @get(
        "/deals/{code:str}/analysis",
        operation_id="analyseDeal",
        summary="Can the deal be won, and how many cards at most: the solver's answer, cached per code",
        description="With `shortest=true`, also a winning line with the fewest moves under the code's rules, found"
        " within the same time limit. Limited per client address; 503 `solver_busy` when every solver worker and the"
        " queue are taken.",
        responses=problems(400, 409, 422, 429, 503),
        exclude_from_auth=True,
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def analysis(
        self,
        request: AnyRequest,
        code: DealCodeText,
        *,
        solver: Injected[Solver],
        redis: Injected[RedisClient],
        retention: Injected[Retention],
        address_limits: Injected[AddressLimits],
        shortest: Annotated[bool, QueryParameter(description="Also a shortest winning line.")] = False,
    ) -> DealAnalysis:
        deal = deal_code_of(code)
        await address_limits.check(request, LimitName.ANALYSES)
        return await solver.analyse_deal(redis, deal, retention.analysis_ttl_s, shortest=shortest)

    @get(
        "/rules",
        operation_id="listRules",
        localised=True,
        security=[{}, {"bearerAuth": []}],
        summary="Rule presets and variants, described in your language",
        description="Public; with a bearer token, in the player's language when Accept-Language names none.",
        exclude_from_auth=True,
    )
    async def rules(self, request: AnyRequest, players: Injected[PlayerStore]) -> Response[RulesCatalogue]:
        player = await bearer_player(request, players)
        locale = locale_of(request, player.locale if player else "hu")
        presets = [
            RulePreset(segment=s, name=t[locale][0], description=t[locale][1], rules=RuleSet(**r.to_json()))
            for s, (r, t) in PRESETS.items()
        ]
        variants = [RuleVariant(key=k, name=t[locale][0], description=t[locale][1]) for k, t in VARIANTS.items()]
        catalogue = RulesCatalogue(presets=presets, variants=variants)
        return Response(catalogue, headers={"Content-Language": locale, "Vary": "Accept-Language"})
