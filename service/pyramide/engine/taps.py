"""Taps: the app's way to play, one touch at a time, with the app's exact answers.

- A covered pyramid card does nothing (``card_covered``, explained only when error explanations are on).
- A free card is selected; tapping it again clears the selection.
- A free king goes with one tap.
- A second free card that makes 13 with the selected one removes both; one that does not answers
  ``sum_must_be_13`` (always shown) and becomes the selection.
- The stock draws, or turns the waste over when it is empty.
- Under the variants, the extra partner (the card covered only by the selected card, or the waste card beneath a
  selected card just drawn) is tapped second: it pairs when it makes 13, else ``sum_must_be_13`` and the
  selection stays. It may also be tapped first, when it makes 13 with its partner (the move is legal): it is then
  selected, and tapping the partner pairs them (a page shows it tappable because ``legal_moves`` names it).

Cards that cannot be touched at all in the app (face down in the stock, buried in the waste, already gone) raise
:class:`IllegalMoveError`: a client that sends them has a bug, not a player who mis-tapped.
"""

from __future__ import annotations

from pyramide.engine.cards import Card, card_code, card_value, is_king, values_pair
from pyramide.engine.codes import Code
from pyramide.engine.errors import IllegalMoveError
from pyramide.engine.game import Game
from pyramide.engine.messages import ALWAYS_SHOWN
from pyramide.engine.moves import DRAW, RECYCLE, Move, RemoveKing, RemovePair
from pyramide.engine.operations import Feedback, Status, TapResult
from pyramide.engine.pyramid import is_free, sole_coverer


def feedback(code: str, **params: str) -> Feedback:
    """Feedback for ``code``, shown always when the rules document says the app always shows it."""
    return Feedback(code, tuple(params.items()), code in ALWAYS_SHOWN)


def tap_card(game: Game, card: Card) -> TapResult:
    """Touch ``card`` on the table."""
    if game.is_won:
        raise IllegalMoveError(Code.GAME_OVER)
    if game.is_free(card):
        return _tap_free(game, card)
    selected = game.selection
    if selected is not None and _is_extra_partner(game, selected, card):
        return _pair_or_refuse(game, selected, card, keep=selected)
    if is_selectable_partner(game, card):
        game.selection = card
        return TapResult(feedback(Code.SELECTED, card=card_code(card)))
    slot = game.slots[card]
    if slot >= 0 and game.present >> slot & 1:
        return TapResult(feedback(Code.CARD_COVERED, card=card_code(card)))
    game.check_playable(card)  # raises the precise reason: gone, face down or buried
    raise AssertionError(f"{card_code(card)} is neither free nor covered, yet playable")


def tap_stock(game: Game) -> TapResult:
    """Touch the stock: draw, or turn the waste over when the stock is empty."""
    if game.is_won:
        raise IllegalMoveError(Code.GAME_OVER)
    if game.outcome().status is Status.STUCK:
        return TapResult(feedback(Code.NO_MORE_MOVES))
    if game.stock:
        return _apply(game, DRAW, Code.DRAWN, card=card_code(game.stock[0]))
    if not game.waste:
        return TapResult(feedback(Code.STOCK_EMPTY))
    if game.recycles_left == 0:
        return TapResult(feedback(Code.NO_RECYCLES_LEFT))
    return _apply(game, RECYCLE, Code.RECYCLED)


def _tap_free(game: Game, card: Card) -> TapResult:
    selected = game.selection
    if selected == card:
        game.selection = None
        return TapResult(feedback(Code.DESELECTED, card=card_code(card)))
    if is_king(card):
        return _apply(game, RemoveKing(card), Code.REMOVED, cards=card_code(card))
    if selected is None or not (game.is_free(selected) or _is_extra_partner(game, card, selected)):
        game.selection = card  # nothing selected, or an extra partner this card cannot take: start afresh
        return TapResult(feedback(Code.SELECTED, card=card_code(card)))
    return _pair_or_refuse(game, selected, card, keep=card)


def _pair_or_refuse(game: Game, selected: Card, card: Card, keep: Card) -> TapResult:
    if not values_pair(card_value(selected), card_value(card)):
        game.selection = keep
        return TapResult(feedback(Code.SUM_MUST_BE_13, cards=f"{card_code(selected)}+{card_code(card)}"))
    move = RemovePair(selected, card)
    return _apply(game, move, Code.REMOVED, cards=move.notation())


def _is_extra_partner(game: Game, selected: Card, card: Card) -> bool:
    """The variants' partners that are not free: the card covered only by the selected one, or the waste card
    beneath a selected card just drawn."""
    rules, waste = game.rules, game.waste
    if rules.stock_waste_pairs and game.fresh_draw and len(waste) >= 2 and (selected, card) == waste[:-3:-1]:
        return True
    slot, cover = game.slots[card], game.slots[selected]
    return (
        rules.cover_pairs
        and slot >= 0
        and cover >= 0
        and bool(game.present >> slot & 1)
        and sole_coverer(game.present, slot) == cover
        and is_free(game.present, cover)
    )


def is_selectable_partner(game: Game, card: Card) -> bool:
    """An extra partner tapped first: the waste card beneath the card just drawn, or the card covered only by a
    free card, when the two make 13 (``RemovePair`` of them is among the legal moves)."""
    waste = game.waste
    partner: Card | None = None
    if game.rules.stock_waste_pairs and len(waste) >= 2 and card == waste[-2]:
        partner = waste[-1]
    elif game.rules.cover_pairs and game.slots[card] >= 0:
        cover = sole_coverer(game.present, game.slots[card]) if game.present >> game.slots[card] & 1 else None
        partner = game.layout.pyramid[cover] if cover is not None and cover >= 0 else None
    return (
        partner is not None
        and _is_extra_partner(game, partner, card)
        and values_pair(card_value(partner), card_value(card))
    )


def end_feedback(game: Game) -> Feedback | None:
    """What the app shows once a change has ended the play: the win, or no move left; ``None`` while it goes on.
    The one statement of it, for taps and for explicit moves alike."""
    status = game.outcome().status
    if status is Status.WON:
        return feedback(Code.WON)
    if status is Status.STUCK:
        return feedback(Code.NO_MORE_MOVES)
    return None


def _apply(game: Game, move: Move, code: str, **params: str) -> TapResult:
    operation = game.check(move)
    game.apply(operation)
    return TapResult(end_feedback(game) or feedback(code, **params), operation)
