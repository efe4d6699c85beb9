"""The daily challenges' objects (their deals dealt ahead, their service, their closes) and the events' (webhook
endpoints and the deliverer)."""

from __future__ import annotations

from dataclasses import dataclass

from pyramide.engine import DealCode
from pyramide.service.challenges import ChallengeCloses, ChallengeDeals, ChallengeService
from pyramide.service.deals import DealSecret, Par, par_shown
from pyramide.service.deals.par import Saved
from pyramide.service.events import Deliverer, WebhookStore
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.meters import process_meters
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.stats import Leaderboards
from pyramide.service.wiring.deals import Deals
from pyramide.service.wiring.games import Games


def challenge_deals(
    settings: Settings, redis: RedisClient, deals: Deals, clock: Clock, tasks: TaskRegistry
) -> ChallengeDeals:
    """The challenges' sealed deals, which games are created from too."""
    secret = DealSecret(redis, settings.secrets.deal_secret)
    return ChallengeDeals(
        redis,
        secret,
        deals.solver,
        settings.challenges.presets,
        settings.challenges.candidates,
        days_ahead=settings.challenges.days_ahead,
        clock=clock,
        tasks=tasks,
    )


@dataclass(slots=True)
class Challenges:
    challenges: ChallengeService
    closes: ChallengeCloses

    @classmethod
    def start(
        cls,
        settings: Settings,
        redis: RedisClient,
        *,
        sealed_deals: ChallengeDeals,
        deals: Deals,
        games: Games,
        leaderboards: Leaderboards,
    ) -> Challenges:
        challenges = ChallengeService(sealed_deals, games.games, leaderboards, deals.pars)
        deals.pars.on_saved(_boards_told(leaderboards, challenges))
        closes = ChallengeCloses(redis, sealed_deals, settings.challenges.close_check_s, challenges.touch_board)
        return cls(challenges=challenges, closes=closes)


def _boards_told(leaderboards: Leaderboards, challenges: ChallengeService) -> Saved:
    """What a saved par bumps: the boards of the closed challenges that dealt it, then the deal's board, last, so
    that its shown state being written marks the par's background work as over (for tests that count commands)."""

    async def told(code: DealCode, par: Par) -> None:
        await challenges.par_saved(code)
        await leaderboards.touch(str(code), par_shown(par))

    return told


@dataclass(slots=True)
class Events:
    webhooks: WebhookStore
    deliverer: Deliverer

    @classmethod
    def start(cls, settings: Settings, redis: RedisClient, clock: Clock, tasks: TaskRegistry) -> Events:
        webhooks = WebhookStore(redis, clock=clock)
        return cls(webhooks=webhooks, deliverer=Deliverer(redis, webhooks, settings.webhooks, tasks, process_meters()))
