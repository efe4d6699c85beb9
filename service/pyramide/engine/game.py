"""A game of Pyramide in progress: the table, legality, applying and undoing moves, status and score.

Each move goes verify → do: :meth:`Game.check` raises :class:`IllegalMoveError` and changes nothing;
:meth:`Game.play` checks, then applies and returns the frozen :class:`Operation`. Taps, the app's way to play,
live in :mod:`pyramide.engine.taps` and are built on the same two steps.
"""

from __future__ import annotations

from functools import lru_cache

from pyramide.engine.cards import Card, card_code, card_value, is_king, partner, values_pair
from pyramide.engine.codes import Code
from pyramide.engine.deal_codes import DealCode
from pyramide.engine.errors import IllegalMoveError, InvalidStateError
from pyramide.engine.layout import Layout
from pyramide.engine.moves import DRAW, RECYCLE, Draw, Move, Recycle, RemoveKing, RemovePair, Undo
from pyramide.engine.operations import (
    RECORD_SIZE,
    Operation,
    Outcome,
    Status,
    Undone,
    pack_operation,
    unpack_operation,
)
from pyramide.engine.pyramid import FULL, SLOTS, cover_pair_slots, free_slots, is_free, sole_coverer
from pyramide.engine.rules import Rules

_PAIR_NOTATION: tuple[tuple[str, ...], ...] = tuple(
    tuple(f"{card_code(Card(a))}+{card_code(Card(b))}" for b in range(52)) for a in range(52)
)
"""A pair's notation by its cards (``RemovePair.notation``), for :meth:`Game.legal_notations`."""

HISTORY_LIMIT = 100


@lru_cache(maxsize=4096)
def slot_table(pyramid: tuple[Card, ...]) -> tuple[int, ...]:
    """For each of the 52 cards, its pyramid slot, or -1 for a card dealt to the waste or stock."""
    table = [-1] * 52
    for slot, card in enumerate(pyramid):
        table[card] = slot
    return tuple(table)


class Game:
    """The mutable state of one game. Compare with ``==``; copy with :meth:`copy`."""

    __slots__ = (
        "_history",
        "_outcome",
        "_stock",
        "_waste",
        "code",
        "explain_errors",
        "fresh_draw",
        "layout",
        "moves",
        "present",
        "recycles_used",
        "rules",
        "selection",
        "slots",
        "undos",
    )

    def __init__(self, code: DealCode | str, *, explain_errors: bool = False) -> None:
        self.code = code if isinstance(code, DealCode) else DealCode.parse(code)
        self.rules: Rules = self.code.rules
        self.layout: Layout = self.code.deal()
        self.slots = slot_table(self.layout.pyramid)
        self.present = FULL
        self._stock = list(reversed(self.layout.stock))  # the next card to draw is last
        self._waste = list(self.layout.waste)  # the top card is last
        self.recycles_used = 0
        self.moves = 0
        self.undos = 0
        self.fresh_draw = False
        self.selection: Card | None = None
        self.explain_errors = explain_errors
        self._history = bytearray()  # the undo history, packed records of RECORD_SIZE bytes, oldest first
        self._outcome: Outcome | None = None  # decided by outcome(), forgotten by every change

    @classmethod
    def from_layout(cls, layout: Layout, rules: Rules, *, explain_errors: bool = False) -> Game:
        """A game dealt from a layout chosen by hand; its code is the layout's long form."""
        return cls(DealCode.for_layout(layout, rules), explain_errors=explain_errors)

    # -- the table -------------------------------------------------------------------------------------------

    @property
    def stock(self) -> tuple[Card, ...]:
        """The stock in draw order, the next card first."""
        return tuple(reversed(self._stock))

    @property
    def stock_count(self) -> int:
        return len(self._stock)

    @property
    def waste(self) -> tuple[Card, ...]:
        """The waste from bottom to top."""
        return tuple(self._waste)

    @property
    def waste_top(self) -> Card | None:
        return self._waste[-1] if self._waste else None

    @property
    def pyramid(self) -> list[Card | None]:
        """The 28 slots by rows, ``None`` where the card is gone."""
        return [card if self.present >> s & 1 else None for s, card in enumerate(self.layout.pyramid)]

    def free_cards(self) -> list[Card]:
        """The free pyramid cards in slot order, then the waste top."""
        free = [self.layout.pyramid[s] for s in free_slots(self.present)]
        return [*free, self._waste[-1]] if self._waste else free

    def is_free(self, card: Card) -> bool:
        """A free pyramid card, or the waste top."""
        slot = self.slots[card]
        if slot >= 0:
            return is_free(self.present, slot)
        return bool(self._waste) and self._waste[-1] == card

    @property
    def score(self) -> int:
        """10 for every pyramid card removed."""
        return 10 * (SLOTS - self.present.bit_count())

    @property
    def recycles_left(self) -> int | None:
        """Turn-overs still allowed; ``None`` when there is no limit."""
        limit = self.rules.recycles
        return None if limit is None else limit - self.recycles_used

    @property
    def undo_available(self) -> int:
        """How many operations undo can take back now."""
        return 0 if self.is_won else len(self._history) // RECORD_SIZE

    @property
    def history(self) -> tuple[Operation, ...]:
        """The operations undo can take back, oldest first (at most the last 100)."""
        raw = self._history
        return tuple(unpack_operation(bytes(raw[i : i + RECORD_SIZE])) for i in range(0, len(raw), RECORD_SIZE))

    # -- status ----------------------------------------------------------------------------------------------

    @property
    def is_won(self) -> bool:
        """The win condition: the pyramid is clear (under the strict win, the stock and waste too)."""
        if self.present:
            return False
        return not self.rules.strict_win or not (self._stock or self._waste)

    def outcome(self) -> Outcome:
        """The game's status and score, decided here and nowhere else: ``won`` when :attr:`is_won`, ``stuck``
        when no removal, draw or turn-over is left (:meth:`_strict_dead_end` included), else ``in_progress``.
        Kept until the next move or undo, so every reader of one state shares one decision."""
        outcome = self._outcome
        if outcome is None:
            if self.is_won:
                status = Status.WON
            else:
                status = Status.IN_PROGRESS if self._has_legal_move() else Status.STUCK
            outcome = self._outcome = Outcome(status, self.score)
        return outcome

    @property
    def status(self) -> Status:
        """The status of :meth:`outcome`."""
        return self.outcome().status

    def _can_draw_or_recycle(self) -> bool:
        return bool(self._stock) or (bool(self._waste) and self.recycles_left != 0)

    def _has_legal_move(self) -> bool:
        if self._strict_dead_end():
            return False
        return self._can_draw_or_recycle() or bool(self._removals())

    def _strict_dead_end(self) -> bool:
        """Under the strict win with the pyramid cleared, stock and waste cards leave only as kings or stock–waste
        pairs: when drawing and turning over can never bring one of those about, the game is stuck."""
        if not (self.rules.strict_win and self.present == 0 and (self._stock or self._waste)):
            return False
        stock, waste, fresh, recycles = (
            list(self._stock),
            list(self._waste),
            self.fresh_draw,
            self.recycles_used,
        )
        limit, turned = self.rules.recycles, 0
        while True:
            if waste and (is_king(waste[-1]) or self._stock_waste_pair(waste, fresh)):
                return False
            if stock:
                waste.append(stock.pop())
                fresh = True
            elif waste and (limit is None or recycles < limit) and turned < 2:
                stock, waste, fresh, recycles, turned = waste[::-1], [], False, recycles + 1, turned + 1
            else:
                return True

    def _stock_waste_pair(self, waste: list[Card], fresh: bool) -> bool:
        return (
            self.rules.stock_waste_pairs
            and fresh
            and len(waste) >= 2
            and values_pair(card_value(waste[-1]), card_value(waste[-2]))
        )

    # -- legal moves -----------------------------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Every removal, draw and turn-over allowed now (undo is listed by :attr:`undo_available`)."""
        if self.is_won or self._strict_dead_end():
            return []
        moves = self._removals()
        if self._stock:
            moves.append(DRAW)
        elif self._waste and self.recycles_left != 0:
            moves.append(RECYCLE)
        return moves

    def _removals(self) -> list[Move]:
        pyramid, present = self.layout.pyramid, self.present
        free = [pyramid[s] for s in free_slots(present)]
        top = self._waste[-1] if self._waste else None
        moves: list[Move] = [RemoveKing(c) for c in free if is_king(c)]
        if top is not None and is_king(top):
            moves.append(RemoveKing(top))
        by_value: dict[int, list[Card]] = {}
        for card in free if top is None else (*free, top):
            by_value.setdefault(card_value(card), []).append(card)
        for value, firsts in by_value.items():
            if value < partner(value):
                moves.extend(RemovePair(a, b) for a in firsts for b in by_value.get(partner(value), ()))
        if top is not None and self._stock_waste_pair(self._waste, self.fresh_draw):
            moves.append(RemovePair(self._waste[-2], top))
        if self.rules.cover_pairs:
            moves.extend(self._cover_pairs())
        return moves

    def legal_notations(self) -> list[str]:
        """The notation of each of :meth:`legal_moves`, in the same order, without building the moves: what a
        snapshot lists on every move, at about a third of the cost (issue 58)."""
        if self.is_won or self._strict_dead_end():
            return []
        pyramid, waste = self.layout.pyramid, self._waste
        cards = [pyramid[s] for s in free_slots(self.present)]
        top = waste[-1] if waste else None
        if top is not None:
            cards.append(top)
        notations = [card_code(c) for c in cards if is_king(c)]
        by_value: dict[int, list[Card]] = {}
        for card in cards:
            by_value.setdefault(card_value(card), []).append(card)
        for value, firsts in by_value.items():
            seconds = by_value.get(partner(value)) if value < partner(value) else None
            if seconds:
                notations.extend(_PAIR_NOTATION[a][b] for a in firsts for b in seconds)
        if top is not None and self._stock_waste_pair(waste, self.fresh_draw):
            notations.append(_PAIR_NOTATION[waste[-2]][top])
        if self.rules.cover_pairs:
            notations.extend(_PAIR_NOTATION[cover][covered] for cover, covered in self._cover_pair_cards())
        if self._stock:
            notations.append(DRAW.SYMBOL)
        elif waste and self.recycles_left != 0:
            notations.append(RECYCLE.SYMBOL)
        return notations

    def _cover_pairs(self) -> list[Move]:
        return [RemovePair(cover, covered) for cover, covered in self._cover_pair_cards()]

    def _cover_pair_cards(self) -> list[tuple[Card, Card]]:
        """(covering card, covered card) for each pair the covering-card variant allows now."""
        pyramid = self.layout.pyramid
        return [
            (pyramid[cover], pyramid[slot])
            for slot, cover in cover_pair_slots(self.present)
            if values_pair(card_value(pyramid[slot]), card_value(pyramid[cover]))
        ]

    def is_legal(self, move: Move) -> bool:
        try:
            self.check(move)
        except IllegalMoveError:
            return False
        return True

    # -- verify ----------------------------------------------------------------------------------------------

    def check(self, move: Move) -> Operation:
        """Raise :class:`IllegalMoveError` if ``move`` is not allowed now; otherwise return the operation it
        concerns: the one it would apply, or for an undo the one it would take back. Changes nothing."""
        if isinstance(move, Undo):
            if self.is_won:
                raise IllegalMoveError(Code.GAME_OVER)
            if not self._history:
                raise IllegalMoveError(Code.NOTHING_TO_UNDO)
            return unpack_operation(bytes(self._history[-RECORD_SIZE:]))
        if self.is_won:
            raise IllegalMoveError(Code.GAME_OVER)
        if self._strict_dead_end():
            raise IllegalMoveError(Code.NO_MORE_MOVES)
        if isinstance(move, RemoveKing):
            return self._check_king(move)
        if isinstance(move, RemovePair):
            return self._check_pair(move)
        if isinstance(move, Draw):
            if not self._stock:
                raise IllegalMoveError(Code.STOCK_EMPTY)
            return Operation(move, fresh_before=self.fresh_draw)
        if isinstance(move, Recycle):
            return self._check_recycle(move)
        raise TypeError(f"not a move: {move!r}")

    def _check_king(self, move: RemoveKing) -> Operation:
        card = move.card
        if not is_king(card):
            raise IllegalMoveError(Code.NOT_A_KING, card=card_code(card))
        self.check_playable(card)
        from_waste = () if self.slots[card] >= 0 else (card,)
        return Operation(move, from_waste, self.fresh_draw)

    def _check_pair(self, move: RemovePair) -> Operation:
        first, second = move.cards
        if first == second:
            raise IllegalMoveError(Code.SAME_CARD, card=card_code(first))
        if not (self._is_cover_pair(first, second) or self._is_stock_waste_pair(first, second)):
            self.check_playable(first)
            self.check_playable(second)
        if not values_pair(card_value(first), card_value(second)):
            raise IllegalMoveError(Code.SUM_MUST_BE_13, cards=f"{card_code(first)}+{card_code(second)}")
        from_waste = tuple(c for c in self._waste[-2:] if c in (first, second))
        return Operation(move, from_waste, self.fresh_draw)

    def _check_recycle(self, move: Recycle) -> Operation:
        if self._stock:
            raise IllegalMoveError(Code.STOCK_NOT_EMPTY)
        if not self._waste:
            raise IllegalMoveError(Code.WASTE_EMPTY)
        if self.recycles_left == 0:
            raise IllegalMoveError(Code.NO_RECYCLES_LEFT)
        return Operation(move, fresh_before=self.fresh_draw)

    def check_playable(self, card: Card) -> None:
        """Raise unless ``card`` is a free pyramid card or the waste top: the cards any removal may use."""
        slot = self.slots[card]
        if slot >= 0:
            if not self.present >> slot & 1:
                raise IllegalMoveError(Code.CARD_REMOVED, card=card_code(card))
            if not is_free(self.present, slot):
                raise IllegalMoveError(Code.CARD_COVERED, card=card_code(card))
        elif not self._waste or self._waste[-1] != card:
            if card in self._waste or card in self._stock:
                raise IllegalMoveError(Code.NOT_FREE, card=card_code(card))
            raise IllegalMoveError(Code.CARD_REMOVED, card=card_code(card))

    def _is_cover_pair(self, first: Card, second: Card) -> bool:
        """Under ``cover_pairs``: one card is covered only by the other, which is free."""
        if not self.rules.cover_pairs:
            return False
        slot_a, slot_b = self.slots[first], self.slots[second]
        if slot_a < 0 or slot_b < 0:
            return False
        present = self.present
        if not (present >> slot_a & 1 and present >> slot_b & 1):
            return False
        for covered, cover in ((slot_a, slot_b), (slot_b, slot_a)):
            if sole_coverer(present, covered) == cover and is_free(present, cover):
                return True
        return False

    def _is_stock_waste_pair(self, first: Card, second: Card) -> bool:
        """Under ``stock_waste_pairs``: the card just drawn, still on top, and the waste card beneath it."""
        waste = self._waste
        return (
            self.rules.stock_waste_pairs
            and self.fresh_draw
            and len(waste) >= 2
            and {first, second} == {waste[-1], waste[-2]}
        )

    # -- do --------------------------------------------------------------------------------------------------

    def play(self, move: Move) -> Operation | Undone:
        """Apply ``move`` if it is legal (else raise and change nothing) and say what was done."""
        if isinstance(move, Undo):
            return self.undo()
        operation = self.check(move)
        self.apply(operation)
        return operation

    def apply(self, operation: Operation) -> None:
        """Apply an operation that :meth:`check` returned for this very state."""
        move = operation.move
        if isinstance(move, Draw):
            self._waste.append(self._stock.pop())
            self.fresh_draw = True
        elif isinstance(move, Recycle):
            self._stock = self._waste[::-1]
            self._waste = []
            self.recycles_used += 1
            self.fresh_draw = False
        else:
            for card in operation.removed:
                slot = self.slots[card]
                if slot >= 0:
                    self.present &= ~(1 << slot)
            if operation.from_waste:
                del self._waste[-len(operation.from_waste) :]
                self.fresh_draw = False
        self.moves += 1
        self.selection = None
        self._outcome = None
        self._history += pack_operation(operation)
        if len(self._history) > HISTORY_LIMIT * RECORD_SIZE:
            del self._history[:RECORD_SIZE]

    def undo(self) -> Undone:
        """Take back the last operation: cards back where they were, its points off; the move counter stays and
        the undo counter (which the statistics show) goes up."""
        operation = self.check(Undo())
        self._check_undoable(operation)
        del self._history[-RECORD_SIZE:]
        move = operation.move
        if isinstance(move, Draw):
            self._stock.append(self._waste.pop())
        elif isinstance(move, Recycle):
            self._waste = self._stock[::-1]
            self._stock = []
            self.recycles_used -= 1
        else:
            for card in operation.removed:
                slot = self.slots[card]
                if slot >= 0:
                    self.present |= 1 << slot
            self._waste.extend(operation.from_waste)
        self.fresh_draw = operation.fresh_before
        self.selection = None
        self._outcome = None
        self.undos += 1
        return Undone(operation)

    def _check_undoable(self, operation: Operation) -> None:
        """A stored history that does not fit the table (damaged storage) must not corrupt the game on undo."""
        move = operation.move
        if isinstance(move, Draw):
            fits = bool(self._waste)
        elif isinstance(move, Recycle):
            fits = not self._waste and self.recycles_used > 0
        else:
            table = set(self._stock) | set(self._waste)
            fits = all(
                not self.present >> self.slots[c] & 1 if self.slots[c] >= 0 else c in operation.from_waste
                for c in operation.removed
            ) and not table & set(operation.from_waste)
        if not fits:
            raise InvalidStateError(f"the undo history does not fit the table at {move.notation()}")

    # -- identity --------------------------------------------------------------------------------------------

    def _key(self) -> tuple[object, ...]:
        return (
            self.code,
            self.present,
            self._stock,
            self._waste,
            self.recycles_used,
            self.moves,
            self.undos,
            self.fresh_draw,
            self.selection,
            self.explain_errors,
            self._history,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Game):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> Game:
        """An independent copy (the layout and operations are immutable and shared)."""
        twin = Game.__new__(Game)
        for name in Game.__slots__:
            setattr(twin, name, getattr(self, name))
        twin._stock = list(self._stock)
        twin._waste = list(self._waste)
        twin._history = bytearray(self._history)
        return twin

    def __repr__(self) -> str:
        return f"<Game {self.code} {self.status} score={self.score} moves={self.moves}>"
