"""The games' objects: reading, creating, playing (with the move route's allowance), hints, reviews, settlement,
certificates."""

from __future__ import annotations

from dataclasses import dataclass

from pyramide.service.challenges import ChallengeDeals
from pyramide.service.games.access import ChallengeAccess
from pyramide.service.games.certificates import Certificates, SigningKeys
from pyramide.service.games.creation import GameCreation
from pyramide.service.games.dependencies import GameWrites
from pyramide.service.games.hints import GameHints
from pyramide.service.games.play import GamePlay
from pyramide.service.games.reading import GameReading
from pyramide.service.games.review import GameReviews
from pyramide.service.games.screen_queue import RETRY_S
from pyramide.service.games.screening import Screening
from pyramide.service.games.settlement import Settlement
from pyramide.service.games.store import GameStore
from pyramide.service.http.limits import MoveAllowance
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.ratelimit import RateLimiter
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.stats import FairPlay
from pyramide.service.wiring.deals import Deals, Stats


@dataclass(slots=True)
class Games:
    settlement: Settlement
    games: GameReading
    creation: GameCreation
    hints: GameHints
    game_reviews: GameReviews
    game_writes: GameWrites
    signing: SigningKeys
    certificates: Certificates

    @classmethod
    def start(
        cls,
        settings: Settings,
        redis: RedisClient,
        limiter: RateLimiter,
        *,
        deals: Deals,
        stats: Stats,
        sealed_deals: ChallengeDeals,
        move_allowance: MoveAllowance,
        clock: Clock,
        tasks: TaskRegistry,
    ) -> Games:
        store = GameStore(redis, settings.retention, settings.caps, settings.limits.per_minute, clock=clock)
        challenges = settings.challenges
        fair_play = FairPlay(challenges.players, challenges.min_move_ms)
        screening = None
        if challenges.screening:
            worlds, limit_s = challenges.screen_worlds, challenges.screen_time_limit_s
            screening = Screening(deals.solver, challenges.min_line_move_ms, worlds, limit_s)
        settlement = Settlement(
            redis,
            store,
            stats.stats,
            stats.leaderboards,
            settings.play.settlement_grace_s,
            fair_play=fair_play,
            reviews=stats.reviews,
            screening=screening,
            tasks=tasks,
        )
        if settlement.queue is not None:
            tasks.every("screen retries", RETRY_S, settlement.sweep, first_s=RETRY_S)
        access = ChallengeAccess(settings.challenges.players)
        games = GameReading(store, deals.pars, access)
        signing = SigningKeys(redis, settings.secrets.signing_keys)
        play = GamePlay(store, settings.play.conflict_retries, settlement, deals.pars, access)
        return cls(
            settlement=settlement,
            games=games,
            creation=GameCreation(store, deals.solver, sealed_deals=sealed_deals, access=access),
            hints=GameHints(games, deals.solver, settlement, limiter),
            game_reviews=GameReviews(games, deals.solver, settings.retention.analysis_ttl_s),
            game_writes=GameWrites(play, move_allowance),
            signing=signing,
            certificates=Certificates(store, signing),
        )
