"""Deals and rules: public, since a deal code is meant to be shared."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import PathParameter

from pyramide.engine import DealCode, Rules
from pyramide.engine.messages import Locale
from pyramide.service.http.requests import AnyRequest, check_address_limit, locale_of
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import (
    DEAL_CODE_PATTERN,
    DealAnalysis,
    DealLayout,
    RulePreset,
    RulesBody,
    RulesCatalogue,
    RuleVariant,
)

PRESETS: dict[str, tuple[Rules, dict[Locale, tuple[str, str]]]] = {
    "N": (
        Rules(),
        {
            "hu": ("Az alkalmazás szabályai", "Korlátlan újraforgatás, elég kiüríteni a piramist."),
            "en": ("The app's rules", "Unlimited turn-overs; clearing the pyramid wins."),
        },
    ),
    "2S": (
        Rules(recycles=2, stock_waste_pairs=True),
        {
            "hu": ("Asztali szabályok", "Két újraforgatás; a felhúzott lap párosítható az alatta lévővel."),
            "en": ("Desktop rules", "Two turn-overs; the card just drawn pairs with the waste card beneath."),
        },
    ),
    "0W": (
        Rules(recycles=0, strict_win=True),
        {
            "hu": ("Hagyományos szabályok", "Nincs újraforgatás, és minden lapot el kell távolítani."),
            "en": ("Traditional rules", "No turn-over, and every card must be removed."),
        },
    ),
}

VARIANTS: dict[str, dict[Locale, tuple[str, str]]] = {
    "recycles": {
        "hu": ("Korlátozott újraforgatás", "A húzópakli csak adott számú alkalommal (0–9) forgatható újra."),
        "en": ("Limited turn-overs", "The stock may be turned over only a set number of times (0–9)."),
    },
    "stock_waste_pairs": {
        "hu": ("Húzópakli és dobópakli párosítása", "Az éppen felhúzott lap párosítható az alatta lévő lappal."),
        "en": ("Stock–waste pairing", "The card just drawn may pair with the waste card directly beneath it."),
    },
    "cover_pairs": {
        "hu": ("Párosítás a takaró lappal", "Egy lap párosítható azzal az egyetlen szabad lappal, amely takarja."),
        "en": ("Pairing with the covering card", "A card may pair with the single free card still covering it."),
    },
    "strict_win": {
        "hu": ("Szigorú győzelem", "Nemcsak a piramist, hanem mind az 52 lapot el kell távolítani."),
        "en": ("Strict win", "Not only the pyramid: all 52 cards must be removed."),
    },
}


class DealController(Controller):
    path = "/v1"
    tags = ["deals"]

    @get(
        "/deals/{code:str}",
        operation_id="getDeal",
        summary="The cards and rules of a deal code",
        responses=problems(400, 422, redis=False),
    )
    async def deal(
        self, code: Annotated[str, PathParameter(pattern=DEAL_CODE_PATTERN, description="e.g. PY1-N-AAAAAAS")]
    ) -> DealLayout:
        return DealLayout.model_validate(DealCode.parse(code).to_json())

    @get(
        "/deals/{code:str}/analysis",
        operation_id="analyseDeal",
        summary="Can the deal be won, and how many cards at most: the solver's answer, cached per code",
        description="Limited per client address; 503 `solver_busy` when every solver worker and the queue are taken.",
        responses=problems(400, 422, 429, 503),
    )
    async def analysis(
        self,
        request: AnyRequest,
        code: Annotated[str, PathParameter(pattern=DEAL_CODE_PATTERN, description="e.g. PY1-N-AAAAAAS")],
    ) -> DealAnalysis:
        deal = DealCode.parse(code)
        await check_address_limit(request, "analyses")
        ttl_s = request.app.state.settings.analysis_ttl_s
        result = await request.app.state.solver.analyse_deal(request.app.state.redis, deal, ttl_s)
        return DealAnalysis.model_validate({**result, "code": str(deal)})

    @get("/rules", operation_id="listRules", summary="Rule presets and variants, described in your language")
    async def rules(self, request: AnyRequest) -> RulesCatalogue:
        locale = locale_of(request)
        presets = [
            RulePreset(segment=s, name=t[locale][0], description=t[locale][1], rules=RulesBody(**r.to_json()))
            for s, (r, t) in PRESETS.items()
        ]
        variants = [RuleVariant(key=k, name=t[locale][0], description=t[locale][1]) for k, t in VARIANTS.items()]
        return RulesCatalogue(presets=presets, variants=variants)
