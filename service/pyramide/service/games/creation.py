"""Dealing a game: a random deal, a pasted code, a layout chosen by hand, or a player's one attempt at a challenge."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from uuid import UUID, uuid4

from pyramide.engine import DealCode, Game, Rules, random_deal_code
from pyramide.engine.messages import Locale
from pyramide.service.accounts import Player
from pyramide.service.deals import WINNABLE_ONLY_ATTEMPTS, Solver
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.access import ChallengeAccess
from pyramide.service.games.replies import Reply, reply_for
from pyramide.service.games.sealed import SealedDeal, SealedDeals
from pyramide.service.games.store import GameStore, derived_id, digest
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra.clock import now_ms


@dataclass(frozen=True, slots=True)
class NewGame:
    """What to deal: ``deal`` when one is chosen (a pasted code, a layout), else ``challenge``'s sealed deal, else a
    random deal under ``rules`` (with ``winnable_only``, one the solver proves winnable). ``explain_errors``, when
    given, overrides the player's setting for this game."""

    deal: DealCode | None = None
    rules: Rules = field(default_factory=Rules)
    winnable_only: bool = False
    challenge: str | None = None
    explain_errors: bool | None = None


class GameCreation:
    """Deals new games; a retry with the same Idempotency-Key gets the first reply."""

    def __init__(
        self,
        store: GameStore,
        solver: Solver,
        *,
        sealed_deals: SealedDeals | None = None,
        access: ChallengeAccess | None = None,
    ) -> None:
        self.store = store
        self.clock = store.clock
        self.sealed_deals = sealed_deals
        self.access = access or ChallengeAccess()
        self.solver = solver

    async def _deal(self, new: NewGame) -> DealCode:
        """The deal to play; for ``winnable_only`` the first random deal the solver proves winnable, trying for up to
        the solver's time limit counted from its first answer (starting a cold worker process is not solving, and
        must not use up the time the deals are tried in)."""
        if new.deal is not None:
            return new.deal
        if not new.winnable_only:
            return random_deal_code(new.rules)
        deadline: float | None = None
        for _ in range(WINNABLE_ONLY_ATTEMPTS):
            code = random_deal_code(new.rules)
            if (await self.solver.analyse(Game(code))).winnable:
                return code
            if deadline is None:
                deadline = time.perf_counter() + self.solver.time_limit_s
            elif time.perf_counter() > deadline:
                break
        raise DomainError(ErrorCode.WINNABLE_DEAL_NOT_FOUND)

    async def _sealed(self, challenge: str) -> SealedDeal:
        if self.sealed_deals is None:
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
        return await self.sealed_deals.open_deal(challenge)

    async def create(
        self,
        player: Player,
        new: NewGame,
        locale: Locale,
        idempotency_key: str | None,
        fingerprint: str,
    ) -> tuple[UUID, Reply]:
        """Deal a game for ``player``: its id and the reply (a retry with the same key gets the first reply). A
        challenge's game is the player's one attempt at it (409 ``challenge_already_played`` for a second), and only
        for a player ``access`` lets play (403 ``app_player_required``)."""
        if new.challenge is not None:
            self.access.check_start(player)
        sealed = None if new.challenge is None else await self._sealed(new.challenge)
        code = sealed.code if sealed is not None else await self._deal(new)
        explain = player.explain_errors if new.explain_errors is None else new.explain_errors
        game_id = derived_id("game", str(player.id), idempotency_key) if idempotency_key else None
        now = now_ms(self.clock)
        stored = StoredGame(
            id=game_id or uuid4(),
            owner=player.id,
            game=Game(code, explain_errors=explain),
            created_ms=now,
            chosen=new.deal is not None,
            challenge=None if sealed is None else sealed.challenge,
            sealed_until_ms=0 if sealed is None else sealed.closes_ms,
        )
        reply = reply_for(stored, locale, None, now=now, created=True)
        key = digest(str(player.id), idempotency_key) if idempotency_key else None
        kept = await self.store.create(stored, key, reply.kept(fingerprint) if key else b"", player.token_hash)
        if sealed is not None and self.sealed_deals is not None:
            await self.sealed_deals.joined(sealed.challenge, stored.id)
        if kept is None:
            return stored.id, reply
        if not kept:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        return stored.id, Reply.from_kept(kept, fingerprint, stored.id)
