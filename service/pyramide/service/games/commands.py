"""What a player does to a game: frozen commands, each with the versions of the game it may act on.

A controller turns a request into one of these; :class:`pyramide.service.games.play.GamePlay` carries it out
against the stored game. Each command knows what it does to the game (:meth:`Move.apply`), so playing knows nothing
of the kinds of command.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyramide.engine import Card, Feedback, IllegalMoveError, tap_card, tap_stock
from pyramide.engine import Move as EngineMove
from pyramide.engine.codes import Code
from pyramide.engine.taps import end_feedback
from pyramide.engine.taps import feedback as make_feedback
from pyramide.service.errors import MoveRefusedError
from pyramide.service.games.stored_game import StoredGame

Versions = frozenset[int] | None
"""The versions of the game a command may act on (what the client saw); ``None``: whichever is current."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did: whether the game changed, the record entry and the feedback to show."""

    changed: bool
    notation: str | None = None
    feedback: Feedback | None = None


@dataclass(frozen=True, slots=True)
class Move:
    """Play one move; a refused move is :class:`MoveRefusedError` with the feedback the player is shown."""

    move: EngineMove
    expected: Versions = None

    def apply(self, stored: StoredGame) -> Outcome:
        _guard_open(stored)
        try:
            stored.game.play(self.move)
        except IllegalMoveError as refusal:
            shown = make_feedback(refusal.code).shown(stored.game.explain_errors)
            raise MoveRefusedError(refusal, shown) from None
        return Outcome(True, self.move.notation(), end_feedback(stored.game))


@dataclass(frozen=True, slots=True)
class Tap:
    """Tap a card (``card``) or the stock (``None``), as in the app: it selects, pairs or draws."""

    card: Card | None
    expected: Versions = None

    def apply(self, stored: StoredGame) -> Outcome:
        _guard_open(stored)
        game = stored.game
        before = game.selection
        result = tap_stock(game) if self.card is None else tap_card(game, self.card)
        operation = result.operation
        changed = operation is not None or game.selection != before
        return Outcome(changed, None if operation is None else operation.move.notation(), result.feedback)


@dataclass(frozen=True, slots=True)
class Abandon:
    """Give the game up: it counts as played and lost."""

    expected: Versions = None

    def apply(self, stored: StoredGame) -> Outcome:
        if stored.status.final:
            raise IllegalMoveError(Code.GAME_OVER)
        stored.abandoned = True
        return Outcome(True, None, make_feedback(Code.GAME_OVER))


Command = Move | Tap | Abandon


def _guard_open(stored: StoredGame) -> None:
    if stored.abandoned:
        raise IllegalMoveError(Code.GAME_OVER)
