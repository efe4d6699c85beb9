"""Screening a daily challenge's win before it ranks (issue 57, ``docs/fair-play.md``, Screening).

A win that the cheap fair-play rules would enter (its player may rank, its pace is a person's) may still have been
played by someone who knew the sealed deal: a bot that learnt the stock with a throwaway player and plays the
solver's line at a human pace. The solver judges the win's record off the request path
(:func:`pyramide.solver.foresight.screen_win`, on a worker at :attr:`Priority.SCREEN`): faster than a person who
knew the shortest line could play it, early choices that paid off only for the still hidden stock order, or a line
near par it could not judge in time. Any of these holds the win for review with the figures; none enters it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pyramide.service.deals import Solver
from pyramide.service.errors import DomainError
from pyramide.service.stats import GameResult, HoldReason

log = logging.getLogger("pyramide.service")


@dataclass(frozen=True, slots=True)
class Screened:
    """The screening's judgement of one win: why to hold it (empty: it ranks), and the figures a moderator sees."""

    reasons: list[HoldReason]
    figures: dict[str, Any]


class Screening:
    """The settings' screening of challenge wins: a person's pace along a known line (``line_move_ms``, 0: no such
    bound), the stock orders weighed against the real one (``worlds``, 0: none) and the solver's time for one win."""

    def __init__(self, solver: Solver, line_move_ms: int, worlds: int, time_limit_s: float) -> None:
        self.solver = solver
        self.line_move_ms = line_move_ms
        self.worlds = worlds
        self.time_limit_s = time_limit_s

    async def judge(self, result: GameResult, record: list[str]) -> Screened:
        """Whether the win played as ``record`` is held, and why; a win the solver gave no answer for (out of time,
        a result that names no deal, a screen that failed) is held as ``not_decided``. 503 ``solver_busy`` (a
        :class:`DomainError`) when the solver's queue is full or its worker died: the win is left pending."""
        answer: dict[str, Any] | None = None
        if result.deal is not None:
            try:
                answer = await self.solver.screen(
                    result.deal,
                    record,
                    result.elapsed_ms,
                    line_move_ms=self.line_move_ms,
                    worlds=self.worlds,
                    seed=result.game.int % 2**32,  # the same win screens the same way in every process
                    limit_s=self.time_limit_s,
                )
            except DomainError:
                raise
            except Exception:  # a screen that fails judges nothing: a moderator looks at the win
                log.exception("screening win %s failed; held as not decided", result.game)
        return self._screened(answer)

    def _screened(self, answer: dict[str, Any] | None) -> Screened:
        """The reasons and figures of the solver's ``answer`` (``None``: no answer, not decided)."""
        figures: dict[str, Any] = {"line_move_ms": self.line_move_ms, "worlds": self.worlds}
        if answer is None:
            keys = ("par", "length", "time_bound_ms", "hidden_loss")
            unknown = dict.fromkeys(keys) | {"world_losses": [], "decided": False}
            return Screened([HoldReason.NOT_DECIDED], figures | unknown)
        reasons = [HoldReason(reason) for reason in answer["reasons"]]
        figures |= {
            "par": answer["par"],
            "length": answer["length"],
            "time_bound_ms": answer["time_bound_ms"],
            "hidden_loss": answer["hidden_loss"],
            "world_losses": list(answer["world_losses"]),
            "decided": bool(answer["decided"]),
        }
        return Screened(reasons, figures)
