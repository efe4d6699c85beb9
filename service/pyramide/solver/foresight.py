"""Foresight: whether a winning line's early choices paid off only for stock cards the player had not yet seen.

A deal's stock is its one secret: a card is known once drawn, and the order of the cards not yet drawn stays hidden
until the whole stock has been drawn once. A bot that learned the order elsewhere (a second player drew it through,
a leaked layout) plays the solver's shortest line for the actual order; a person cannot, since the best choices
while cards are hidden depend on where they lie.

So each move made while cards were hidden is priced twice. Its *loss* is the number of moves it adds to the
shortest win (0 for a move on a shortest line): once in the actual deal, and once in each of ``worlds`` imagined
deals that agree with everything the player had seen at that moment (the unseen cards shuffled; after each draw
an imagined deal is made to agree with the card drawn, by swapping it into place, which keeps it a fair sample).
A player who cannot see the hidden cards makes choices that cost about as much in the actual deal as in the
imagined ones: the actual deal is just one of them. A clairvoyant line costs nothing in the actual deal and
clearly more in the imagined ones. The line is judged *foresight* when it is at or near par, lost no move at all
while cards were hidden, and those same choices would have lost at least ``MEAN_LOSS`` moves on average in the
imagined deals, unless the simplest play without foresight (take any removal there is, else draw: ``SIMPLE_PLAYS``
seeded plays) wins the deal in as few moves: on deals where that play is lucky enough to reach par, a bot's line and
a person's are the same, and holding them would hold the person. Figures behind these thresholds (and what they
cannot tell apart): ``docs/fair-play.md`` ("Foresight").
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Any, Final

from pyramide.engine import UNDO, Game, Move, parse_move
from pyramide.engine.cards import Card
from pyramide.engine.deal_codes import DealCode
from pyramide.engine.layout import Layout
from pyramide.engine.moves import Draw, Recycle, RemoveKing, RemovePair
from pyramide.solver.search import solve

NEAR_PAR: Final = 3
"""A line more than this many moves above par is not judged: foresight pays only in a line at or near par."""
MEAN_LOSS: Final = 3
"""The imagined deals' mean loss below which a line's choices did not depend enough on the hidden cards to tell."""
LOST: Final = 30
"""The loss of a move after which an imagined deal can no longer be won (more than any near-par line's)."""
SIMPLE_PLAYS: Final = 20
"""Seeded plays of the simplest honest player a clairvoyant-looking line must beat to be held."""
SIMPLE_CAP: Final = 600
"""Moves after which a simple play gives up."""
SEARCH_S: Final = 3.0
"""The most one search of an imagined deal may take: an imagined deal whose search runs longer is left out of the
judgement from then on (its losses so far would understate it), so that one hard deal cannot use the whole limit."""
FEWEST_WORLDS: Final = 3
"""Imagined deals that must remain for a judgement; fewer: not decided."""


class _OutOfTimeError(Exception):
    """The screen's time limit passed before it could judge."""


def _shortest(game: Game, deadline: float, limit_s: float | None = None) -> list[Move] | None:
    """A shortest winning line from ``game``, or ``None`` when it cannot be won; out of time (the deadline, or
    ``limit_s`` for this search): :class:`_OutOfTimeError`."""
    left_s = deadline - time.perf_counter()
    if left_s <= 0:
        raise _OutOfTimeError
    analysis = solve(game, shortest=True, time_limit_s=left_s if limit_s is None else min(left_s, limit_s))
    if analysis.winnable is None or (analysis.winnable and analysis.shortest is None):
        raise _OutOfTimeError
    return list(analysis.shortest) if analysis.winnable and analysis.shortest is not None else None


class _Deal:
    """One deal a line is priced in (the actual one or an imagined one): its stock order, the game replayed to the
    line's current step, and a shortest line from there (``None``: not known yet)."""

    def __init__(self, code: DealCode, stock: list[Card], history: list[Move], limit_s: float | None = None) -> None:
        self.code, self.stock, self.limit_s = code, stock, limit_s
        self.game = self._replayed(history)
        self.line: list[Move] | None = None
        self.lost = False

    def _replayed(self, history: list[Move]) -> Game:
        layout = self.code.deal()
        game = Game.from_layout(Layout(layout.pyramid, layout.waste, tuple(self.stock)), self.code.rules)
        for move in history:
            game.play(move)
        return game

    def agree(self, position: int, card: Card, history: list[Move]) -> None:
        """Make the stock hold ``card`` at ``position`` (a card just seen there), replaying ``history`` if it moved."""
        if self.stock[position] == card:
            return
        other = self.stock.index(card, position)
        self.stock[position], self.stock[other] = card, self.stock[position]
        self.game = self._replayed(history)
        self.line, self.lost = None, False

    def loss(self, move: Move, deadline: float) -> int:
        """Play ``move`` here; the moves it adds to the shortest win."""
        if self.line is None and not self.lost:
            self.line = _shortest(self.game, deadline, self.limit_s)
            self.lost = self.line is None
        before = self.line
        self.game.play(move)
        if before is None:
            self.line = None
            return 0  # lost before the move: nothing more to lose
        if before and before[0] == move:
            self.line = before[1:]
            return 0
        self.line = _shortest(self.game, deadline, self.limit_s)
        self.lost = self.line is None
        return LOST if self.line is None else len(self.line) + 1 - len(before)

    def undo(self) -> None:
        self.game.play(UNDO)
        self.line, self.lost = None, False


@dataclass(frozen=True, slots=True)
class Foresight:
    """The measure of a line's choices while cards were hidden: its loss in the actual deal and in each imagined
    one (sorted), and whether it is judged clairvoyant."""

    hidden_loss: int
    world_losses: list[int]

    @property
    def clairvoyant(self) -> bool:
        """Perfect while blind, where blind choices cost a person: a lucky person's near-par line mostly loses a
        move or more while cards are hidden (``docs/fair-play.md``, "Foresight")."""
        worlds = self.world_losses
        return bool(worlds) and self.hidden_loss == 0 and statistics.mean(worlds) >= MEAN_LOSS


def measure(code: DealCode, moves: list[Move], worlds: int, seed: int, deadline: float) -> Foresight:
    """Price each move of ``moves`` made while stock cards were hidden (see the module's docstring); out of time:
    :class:`_OutOfTimeError`. The imagined deals are priced only until they decide: a loss in the actual deal, or
    their mean loss at :data:`MEAN_LOSS` (losses only grow), leaves their figures where they were then."""
    rng = random.Random(seed)
    stock = list(code.deal().stock)
    actual = _Deal(code, stock[:], [])
    imagined = [_Deal(code, rng.sample(stock, len(stock)), [], SEARCH_S) for _ in range(worlds)]
    dropped: set[int] = set()
    history: list[Move] = []
    seen = 0
    hidden_loss, losses = 0, [0] * worlds
    for move in moves:
        if seen >= len(stock) or actual.game.recycles_used > 0:
            break  # every card has been seen: nothing left to foresee
        if move == UNDO:
            for deal in (actual, *imagined):
                deal.undo()
            history.append(move)
            continue
        hidden_loss += actual.loss(move, deadline)
        history.append(move)
        drawn = len(stock) - actual.game.stock_count - 1
        kept = [loss for index, loss in enumerate(losses) if index not in dropped]
        if imagined and (hidden_loss > 0 or (kept and statistics.mean(kept) >= MEAN_LOSS)):
            imagined = []  # decided: the rest of the line is priced in the actual deal only
        for index, deal in enumerate(imagined):
            if index in dropped:
                continue
            try:
                losses[index] += deal.loss(move, deadline)
                if isinstance(move, Draw) and drawn >= seen:
                    deal.agree(drawn, stock[drawn], history)
            except _OutOfTimeError:
                if time.perf_counter() >= deadline:
                    raise
                dropped.add(index)
        if imagined and len(imagined) - len(dropped) < FEWEST_WORLDS:
            raise _OutOfTimeError
        if isinstance(move, Draw) and drawn >= seen:
            seen = drawn + 1
    return Foresight(hidden_loss, sorted(loss for index, loss in enumerate(losses) if index not in dropped))


def screen_win(  # noqa: PLR0917 - a solver worker job: the pool passes its arguments by position
    code: str, record: list[str], elapsed_ms: int, line_move_ms: int, worlds: int, seed: int, time_limit_s: float
) -> dict[str, Any]:
    """The screen of a challenge win (run in a solver worker, JSON for the service): held when ``reasons`` is not
    empty. ``faster_than_known_line``: won in less than par × ``line_move_ms``, faster than a person who knew the
    shortest line could play it; ``foresight``: see :func:`measure`; ``not_decided``: a near-par line that could not
    be judged within ``time_limit_s``. ``worlds`` 0 switches the foresight check off; ``line_move_ms`` 0 the time."""
    deadline = time.perf_counter() + time_limit_s
    deal = DealCode.parse(code)
    moves = [parse_move(text) for text in record]
    length = _length(deal, moves)
    answer: dict[str, Any] = {
        "par": None,
        "length": length,
        "time_bound_ms": None,
        "hidden_loss": None,
        "world_losses": [],
        "reasons": [],
        "decided": True,
    }
    try:
        par_line = _shortest(Game(deal), deadline)
    except _OutOfTimeError:
        return answer | {"reasons": ["not_decided"], "decided": False}
    if par_line is None:
        return answer  # cannot happen for a won deal; nothing to measure against
    par = len(par_line)
    answer["par"] = par
    if line_move_ms > 0:
        answer["time_bound_ms"] = par * line_move_ms
        if elapsed_ms < par * line_move_ms:
            answer["reasons"].append("faster_than_known_line")
    if worlds <= 0 or length > par + NEAR_PAR:
        return answer
    try:
        found = measure(deal, moves, worlds, seed, deadline)
    except _OutOfTimeError:
        return answer | {"reasons": [*answer["reasons"], "not_decided"], "decided": False}
    answer["hidden_loss"], answer["world_losses"] = found.hidden_loss, found.world_losses
    held, answer["simple_best"] = foresaw(found, deal, length, seed)
    if held:
        answer["reasons"].append("foresight")
    return answer


def foresaw(found: Foresight, code: DealCode, length: int, seed: int) -> tuple[bool, int | None]:
    """Whether a line of ``length`` moves measured as ``found`` is held for foresight, and the simplest play's best
    (``None`` when it was not needed, or found no win): clairvoyant-looking, and shorter than every simple play."""
    if not found.clairvoyant:
        return False, None
    simple = simplest_win(code, seed)
    return simple is None or simple > length, simple


def greedy(code: DealCode, rng: random.Random) -> list[Move] | None:
    """The simplest play without foresight: any removal there is (chosen at random), else a draw or a turn-over;
    its winning line, or ``None`` when it is stuck or passes ``SIMPLE_CAP`` moves."""
    game, line = Game(code), list[Move]()
    while not game.is_won and len(line) < SIMPLE_CAP:
        legal = game.legal_moves()
        removals = [m for m in legal if isinstance(m, RemovePair | RemoveKing)]
        others = [m for m in legal if isinstance(m, Draw | Recycle)]
        if not removals and not others:
            return None
        move = rng.choice(removals) if removals else others[0]
        game.play(move)
        line.append(move)
    return line if game.is_won else None


def simplest_win(code: DealCode, seed: int) -> int | None:
    """The fewest moves ``SIMPLE_PLAYS`` seeded :func:`greedy` plays win the deal in (``None``: none wins)."""
    rng = random.Random(seed)
    lengths = [len(line) for _ in range(SIMPLE_PLAYS) if (line := greedy(code, random.Random(rng.random())))]
    return min(lengths, default=None)


def _length(code: DealCode, moves: list[Move]) -> int:
    """The moves the line counts (undos are not moves), replayed by the engine; it must end in a win."""
    game = Game(code)
    for move in moves:
        game.play(move)
    if not game.is_won:
        raise ValueError("the record does not end in a win")
    return game.moves
