"""Daily challenges as players see them: the current one per preset, one by id, and its leaderboard."""

from __future__ import annotations

import asyncio
import json
from datetime import date, timedelta
from typing import Any, Final
from uuid import UUID

from pyramide.engine import DealCode
from pyramide.service.accounts import Player
from pyramide.service.challenges.calendar import ChallengeId, day_of, moment
from pyramide.service.challenges.closes import closed_challenges
from pyramide.service.challenges.deals import ChallengeDeals, Chosen
from pyramide.service.deals import ParBook
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games import GameReading, summary
from pyramide.service.infra.clock import now_ms
from pyramide.service.stats import Leaderboards, challenge_board

CALENDAR_MAX_DAYS: Final = 31
"""The most days one calendar request covers."""
SEALED_PAR: Final[dict[str, Any]] = {"par": None, "par_status": "sealed"}
"""A challenge's par while it is open: nothing, whatever is known (its length would tell the deal's depth)."""


class ChallengeService:
    def __init__(
        self, deals: ChallengeDeals, games: GameReading, boards: Leaderboards, pars: ParBook | None = None
    ) -> None:
        self.deals = deals
        self.clock = deals.clock
        self.games = games
        self.boards = boards
        self.pars = pars
        self._closed_deals: dict[ChallengeId, str | None] = {}
        """The deal codes of the closed challenges :meth:`par_saved` looks at, read once each (a chosen deal never
        changes; None: not chosen when read), so that a par saved for any other deal costs no Redis command."""

    async def current(self, preset: str, player: Player | None) -> dict[str, Any]:
        """Today's challenge under ``preset`` (404 ``challenge_not_found`` for a preset without challenges)."""
        now = now_ms(self.clock)
        return await self._describe(self.deals.named(f"{day_of(now).isoformat()}-{preset}", now), player, now)

    async def read(self, challenge: str, player: Player | None) -> dict[str, Any]:
        now = now_ms(self.clock)
        return await self._describe(self.deals.named(challenge, now), player, now)

    async def _describe(self, challenge: ChallengeId, player: Player | None, now: int) -> dict[str, Any]:
        chosen = await self.deals.chosen(challenge, now)
        return {
            **_published(chosen, now),
            **await self._par(chosen, now),
            "players": await self.deals.players(challenge),
            "you": None if player is None else await self._attempt(challenge, player),
        }

    async def calendar(self, first: date | None, last: date | None) -> dict[str, Any]:
        """Every chosen challenge from ``first`` to ``last`` (default: today to the last day chosen ahead), as
        :func:`_published` shows it, at most ``CALENDAR_MAX_DAYS`` days a page: a longer range answers its first
        days and ``next_from``, where the next page starts (every range a client can write is an answer, none an
        error); a backwards one is empty."""
        now = now_ms(self.clock)
        first = day_of(now) if first is None else first
        last = _plus(first, (self.deals.last_day_ahead(now) - day_of(now)).days) if last is None else last
        end = min(last, _plus(first, CALENDAR_MAX_DAYS - 1))
        entries = []
        for offset in range((end - first).days + 1):
            for preset in self.deals.presets:
                chosen = await self.deals.kept(ChallengeId(first + timedelta(days=offset), preset))
                if chosen is not None:
                    entries.append(_published(chosen, now))
        next_from = _plus(end, 1) if end < last else None
        return {"first_day": first, "last_day": max(end, first), "challenges": entries, "next_from": next_from}

    async def _par(self, chosen: Chosen | None, now: int, *, start: bool = True) -> dict[str, Any]:
        """The challenge deal's ``par`` and ``par_status`` once it has closed (the first read after the close
        starts working it out, as for any code, unless not ``start``); ``sealed`` before, and never looked up or
        started then."""
        if chosen is None or self.pars is None or now < chosen.challenge.closes_ms:
            return SEALED_PAR
        par = await (self.pars.par if start else self.pars.known)(chosen.code)
        return {"par": par.moves, "par_status": str(par.status)}

    async def touch_board(self, challenge: ChallengeId, now: int, *, start: bool = False) -> bool:
        """Bump the challenge board's live streams when what its GET shows besides the entries (``final``, the par)
        changed since its change counter last grew (``Leaderboards.touch``); whether it did. Called when the
        challenge closes (the closes' task), when its deal's par is saved, and on each read of its stream (so a
        process that died before telling the board leaves it to the next read)."""
        if now < challenge.closes_ms:
            return False  # open (or not yet): nothing but its entries changes on its board
        kept = await self.deals.kept(challenge)
        if kept is None:
            return False  # never chosen: no board to show
        state = json.dumps({"final": True, **await self._par(kept, now, start=start)})
        return await self.boards.touch(challenge_board(str(challenge)), state)

    async def par_saved(self, code: DealCode) -> None:
        """A deal's par was saved: bump the boards of the closed challenges of the last ``LOOKBACK_DAYS`` days that
        dealt it (they show it from the close on; older ones, and one chosen only after its close, are left to their
        streams' next read)."""
        now = now_ms(self.clock)
        for challenge, dealt in (await self._closed_codes(now)).items():
            if dealt == str(code):
                await self.touch_board(challenge, now)

    async def _closed_codes(self, now: int) -> dict[ChallengeId, str | None]:
        """The deal codes of the challenges of the last ``LOOKBACK_DAYS`` days that have closed, read from Redis
        only the first time (all at once)."""
        closed = closed_challenges(self.deals.presets, now)
        missing = [challenge for challenge in closed if challenge not in self._closed_deals]
        if missing:
            chosen = await asyncio.gather(*(self.deals.kept(challenge) for challenge in missing))
            read = {c: None if kept is None else str(kept.code) for c, kept in zip(missing, chosen, strict=True)}
            known = {c: self._closed_deals[c] for c in closed if c in self._closed_deals}
            self._closed_deals = {**known, **read}  # the days gone past the look-back are dropped
        return self._closed_deals

    async def _attempt(self, challenge: ChallengeId, player: Player) -> dict[str, Any] | None:
        attempt = await self.games.attempt(player, str(challenge))
        if attempt is None:
            return None
        game_id, stored = attempt
        rank = await self.boards.standing(challenge_board(str(challenge)), player.id)
        if stored is None:
            return {"game_id": game_id, "status": None, "moves": None, "elapsed_ms": None, "score": None, "rank": rank}
        shown = summary(stored, stored.created_ms, now_ms(self.clock))
        keys = ("status", "moves", "elapsed_ms", "score")
        return {"game_id": game_id, **{k: shown[k] for k in keys}, "rank": rank}

    def board_channel(self, challenge: str) -> str:
        """Where a change of the challenge's board is announced (see ``Leaderboards.channel``)."""
        return self.boards.channel(challenge_board(str(self.deals.named(challenge, now_ms(self.clock)))))

    async def board_changes(self, challenge: str) -> int:
        """The challenge board's change counter: the id of its live stream's events, once what the board shows
        besides its entries is counted in it (:meth:`touch_board`)."""
        now = now_ms(self.clock)
        named = self.deals.named(challenge, now)
        await self.touch_board(named, now, start=True)
        return await self.boards.changes(challenge_board(str(named)))

    async def leaderboard(
        self,
        challenge: str,
        cursor: str | None,
        limit: int,
        identity: str | None = None,
        around: UUID | None = None,
        *,
        order: str = "rules",
    ) -> dict[str, Any]:
        """A page of the challenge's board (with ``identity``, only those players' entries; ``order="par"``: by
        moves, which within one deal is the order of ``over_par`` and tells nothing of the par while it is
        sealed); with ``around``, that player's entry and its neighbours instead, and the player's rank and
        percentile. The par and each entry's ``over_par`` show after the close only."""
        now = now_ms(self.clock)
        named = self.deals.named(challenge, now)
        kept = await self.deals.kept(named)
        if now < named.opens_ms or (kept is None and not named.is_open(now)):
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
        board = challenge_board(str(named))
        rank, percentile = None, None
        if around is not None:
            page, rank, percentile = await self.boards.around(board, around, identity)
        elif order == "par":
            page = await self.boards.page_by_moves(board, cursor, limit, identity)
        else:
            page = await self.boards.page(board, cursor, limit, identity)
        par = await self._par(kept, now)
        return {
            "rank": rank,
            "percentile": percentile,
            "challenge": str(named),
            "rules": named.rules.to_json(),
            "final": now >= named.closes_ms,
            **par,
            "entries": [_with_par(entry, par["par"]) for entry in page.entries],
            "next_cursor": page.next_cursor,
        }


def _with_par(entry: dict[str, Any], par: int | None) -> dict[str, Any]:
    """A board entry with the deal's par and its moves over it (both null while sealed or not known)."""
    return {**entry, "par": par, "over_par": None if par is None else entry["moves"] - par}


def _published(chosen: Chosen, now: int) -> dict[str, Any]:
    """What anyone may see of a chosen challenge: its commitment from the start, its code and nonce after the close."""
    challenge = chosen.challenge
    closed = now >= challenge.closes_ms
    return {
        "id": str(challenge),
        "rules": challenge.rules.to_json(),
        "opens_at": moment(challenge.opens_ms),
        "closes_at": moment(challenge.closes_ms),
        "open": challenge.is_open(now),
        "commitment": chosen.commitment,
        "committed_at": None if chosen.commitment is None else moment(chosen.chosen_ms),
        "code": str(chosen.code) if closed else None,
        "nonce": chosen.nonce if closed else None,
    }


def _plus(day: date, days: int) -> date:
    """``day`` and ``days`` more, or the last day there is (a date near year 9999 cannot go further)."""
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return date.max
