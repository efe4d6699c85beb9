"""A compact, hashable position for the search, and its moves.

The cards outside the pyramid keep one cyclic order for the whole game: the waste from bottom to top, then the
stock in draw order (a turn-over puts the waste back in the same order). So the stock and the waste are one
sequence ``order`` of up to 24 cards, a bitmask ``left`` of the ones still there, and a position ``drawn``: the
remaining cards before it form the waste, the rest the stock. With the pyramid's 28-bit mask, the turn-overs used
and whether the waste top was just drawn, that is the whole state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, NamedTuple

from pyramide.engine import Game, Rules
from pyramide.engine.cards import KING_VALUE, Card, card_value, is_king, values_pair
from pyramide.engine.moves import DRAW, RECYCLE, Move, RemoveKing, RemovePair
from pyramide.engine.pyramid import cover_pair_slots, free_slots
from pyramide.solver.twins import pair, partner_of, won


class Position(NamedTuple):
    """A position by named fields: the pyramid cards still there (bit ``slot``), the stock and waste cards left (bit
    ``i`` for ``order[i]``), how far drawn (the remaining cards before it form the waste), turn-overs used, and
    whether the waste top was just drawn. Every search keeps it as one integer, :func:`key_of`."""

    present: int
    left: int
    drawn: int
    recycles: int
    fresh: bool


_new = tuple.__new__
"""``_new(Position, fields)`` builds a position without the generated ``__new__``, which checks its arguments: the
move generation builds millions of them."""


@dataclass(frozen=True, slots=True)
class Deal:
    """What does not change during a game: the pyramid's cards, the order outside it, the rules; and what the
    search reads on every move, worked out once (values, the positions holding each value, the pool model)."""

    pyramid: tuple[Card, ...]
    order: tuple[Card, ...]
    rules: Rules
    pooled: bool = True
    """Use the pool model where the rules allow it (not when every draw counts, as for the shortest line)."""
    pyramid_values: tuple[int, ...] = field(init=False, repr=False, compare=False)
    order_values: tuple[int, ...] = field(init=False, repr=False, compare=False)
    pyramid_masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """For each value 0-13, the mask of the pyramid slots holding it."""
    order_masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """For each value 0-13, the mask of the positions in ``order`` holding it."""
    pool: bool = field(init=False, repr=False, compare=False)
    """With unlimited turn-overs and no stock–waste pairing, any remaining card can be brought to the top whenever
    it is needed: the stock and waste behave as an unordered pool."""
    merges: bool = field(init=False, repr=False, compare=False)
    """Whether :func:`normalise` ever changes a position of this deal."""
    strict: bool = field(init=False, repr=False, compare=False)
    limit: int = field(init=False, repr=False, compare=False)
    """The turn-overs the rules allow, -1 for no limit."""
    waste_pairs: bool = field(init=False, repr=False, compare=False)
    _inside: dict[int, tuple[tuple[Move, int], ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    _keyed: dict[int, KeyedInside] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        pyramid_values = tuple(card_value(c) for c in self.pyramid)
        order_values = tuple(card_value(c) for c in self.order)
        object.__setattr__(self, "pyramid_values", pyramid_values)
        object.__setattr__(self, "order_values", order_values)
        object.__setattr__(self, "pyramid_masks", masks_of_values(pyramid_values))
        object.__setattr__(self, "order_masks", masks_of_values(order_values))
        pool = self.pooled and self.rules.recycles is None and not self.rules.stock_waste_pairs
        object.__setattr__(self, "pool", pool)
        object.__setattr__(self, "merges", pool or self.rules.recycles is None)
        object.__setattr__(self, "strict", self.rules.strict_win)
        object.__setattr__(self, "limit", -1 if self.rules.recycles is None else self.rules.recycles)
        object.__setattr__(self, "waste_pairs", self.rules.stock_waste_pairs)

    def inside(self, present: int) -> tuple[tuple[Move, int], ...]:
        """:func:`pyramid_only` for this deal's pyramid, kept per mask."""
        known = self._inside.get(present)
        if known is None:
            known = self._inside[present] = pyramid_only(self.pyramid, present, self.rules.cover_pairs)
        return known

    def keyed_inside(self, present: int) -> KeyedInside:
        """:data:`KeyedInside` for this deal's pyramid, kept per mask."""
        known = self._keyed.get(present)
        if known is None:
            inside, values = self.inside(present), self.pyramid_values
            king = next((i for i, (move, _) in enumerate(inside) if isinstance(move, RemoveKing)), -1)
            pairs = tuple(
                (i, values[(present ^ after).bit_length() - 1])
                for i, (move, after) in enumerate(inside)
                if isinstance(move, RemovePair)
            )
            known = self._keyed[present] = (king, pairs, tuple(after for _, after in inside), free_slots(present))
        return known


KeyedInside = tuple[int, tuple[tuple[int, int], ...], tuple[int, ...], tuple[int, ...]]
"""What the searches read of a pyramid's removals (:func:`successors`, and the A*'s steps): which of them is a free
king's (its index in :func:`pyramid_only` order, -1: none), each pair inside it (its index and the value of one of
its cards), the masks they leave in that order, and its free slots."""


def masks_of_values(values: tuple[int, ...]) -> tuple[int, ...]:
    """For each value 0-13, the mask of the positions holding it."""
    masks = [0] * 14
    for position, value in enumerate(values):
        masks[value] |= 1 << position
    return tuple(masks)


def from_game(game: Game, pooled: bool = True) -> tuple[Deal, Position]:
    order = game.waste + game.stock
    deal = Deal(game.layout.pyramid, order, game.rules, pooled)
    position = Position(game.present, (1 << len(order)) - 1, len(game.waste), game.recycles_used, game.fresh_draw)
    return deal, normalise(deal, position)


def normalise(deal: Deal, position: Position) -> Position:
    """Merge positions that play the same: in the pool model only the pyramid and the remaining cards matter;
    with unlimited turn-overs the count of them does not."""
    if deal.pool:
        return Position(position.present, position.left, 0, 0, False)
    if position.recycles and deal.rules.recycles is None:
        return Position(position.present, position.left, position.drawn, 0, position.fresh)
    return position


def _counts_of_16_bits() -> tuple[int, ...]:
    counts = [0] * (1 << 16)
    for mask in range(1, 1 << 16):
        counts[mask] = counts[mask >> 1] + (mask & 1)
    return tuple(counts)


_CARDS_IN: Final = _counts_of_16_bits()


def cards_in(mask: int) -> int:
    """How many cards a mask (not negative) holds: ``mask.bit_count()``, which compiled code calls as a method
    looked up by name, where reading a table of 16-bit counts stays native (benchmarks/shortest_lines.py). The
    searches count cards with it and only with it."""
    count = 0
    while mask:
        count += _CARDS_IN[mask & 0xFFFF]
        mask >>= 16
    return count


DRAWN_AT: Final = 24
RECYCLES_AT: Final = 29
FRESH_AT: Final = 33
PRESENT_AT: Final = 34
ORDER: Final = (1 << 24) - 1
OUTSIDE: Final = (1 << PRESENT_AT) - 1
"""A key without its pyramid."""
SAME_DRAWN: Final = ~(31 << DRAWN_AT | 1 << FRESH_AT)
"""A key without how far drawn and freshness: what a draw leaves as it was."""


def key_of(position: Position) -> int:
    """A position as one integer, the solver's one encoding of it: from the lowest bits, the cards left (24 bits,
    :data:`ORDER`), how far drawn (5, at :data:`DRAWN_AT`), turn-overs used (4, :data:`RECYCLES_AT`), fresh (1,
    :data:`FRESH_AT`), the pyramid (28, :data:`PRESENT_AT`); :func:`position_of` reads it back. Every search keeps
    its positions so (the full one, the A* of :mod:`.shortest`, the pool search with nothing drawn): an integer
    hashes and compares in a step. The pyramid goes on top because a dict places an integer by its lowest bits,
    and thousands of a search's positions share their pyramid (with it at the bottom they crowded the same
    slots)."""
    present, left, drawn, recycles, fresh = position
    return left | drawn << DRAWN_AT | recycles << RECYCLES_AT | int(fresh) << FRESH_AT | present << PRESENT_AT


def search_key(deal: Deal, position: Position) -> int:
    """:func:`key_of` as the full search keeps positions, merging those that play the same: how far drawn is
    counted from the last card left before it (a removed waste top leaves the same waste as drawing only up to the
    card beneath), freshness only counts under stock–waste pairing, and of the positions whose waste and stock
    hold the same values in the same order, whichever equal cards went, one stands for all: suits never matter.
    It is the one whose cards sit earliest in the order outside the pyramid (:func:`_placed`); a key names the
    cards it holds by those positions, the line found names the real ones (:func:`.search._line`)."""
    present, left, drawn, recycles, fresh = position
    waste, after = _placed(deal, left & ((1 << drawn) - 1), 0)
    stock, _ = _placed(deal, left >> drawn << drawn, after)
    return key_of(Position(present, waste | stock, after, recycles, fresh and deal.waste_pairs))


def _placed(deal: Deal, cards: int, cursor: int) -> tuple[int, int]:
    """``cards`` (positions in the order outside the pyramid) in their order, each moved to the earliest position
    from ``cursor`` on, after the one before, that holds a card of its value: the positions, and the one after the
    last (``cursor`` for none). Placing each card earliest so places every card at or before where any other
    placing of the same values would."""
    masks, values = deal.order_masks, deal.order_values
    placed = 0
    while cards:
        low = cards & -cards
        cards ^= low
        same = masks[values[low.bit_length() - 1]] >> cursor << cursor
        first = same & -same
        placed |= first
        cursor = first.bit_length()
    return placed, cursor


def _settled(deal: Deal, key: int) -> int:
    """A waste card's removal as :func:`search_key` keeps it, from the key of a position it keeps: the waste left
    is placed earliest already (it was, less its top), the stock again from the new end of the waste, whose freed
    positions its first card may now take (when that one stays, so do those after it). Draws, turn-overs and
    removals inside the pyramid keep a kept key as it is."""
    cursor = key >> DRAWN_AT & 31
    stock = (key & ORDER) >> cursor << cursor
    low = stock & -stock
    same = deal.order_masks[deal.order_values[low.bit_length() - 1]] >> cursor << cursor if stock else 0
    if same & -same == low:
        return key
    placed, _ = _placed(deal, stock, cursor)
    return key ^ stock ^ placed


def position_of(key: int) -> Position:
    return Position(
        key >> PRESENT_AT, key & ORDER, key >> DRAWN_AT & 31, key >> RECYCLES_AT & 15, bool(key >> FRESH_AT & 1)
    )


def is_draw(before: int, after: int) -> bool:
    """Whether the position ``after`` is ``before`` drawn on (by keys): nothing changed but how far drawn, which
    grew (a turn-over without a limit also leaves the rest as it was, but draws back to the start)."""
    return not (before ^ after) & SAME_DRAWN and after >> DRAWN_AT & 31 > before >> DRAWN_AT & 31


def successors(deal: Deal, key: int) -> list[int]:
    """The positions :func:`moves` leads to, by keys (:func:`search_key`) and in the same order, without making the
    moves: what the full search does for every position, where :func:`moves` names the moves of the line found."""
    if deal.pool:
        return [search_key(deal, after) for _, after in moves(deal, position_of(key))]
    present, left = key >> PRESENT_AT, key & ORDER
    if won(present, left, deal.strict):
        return []
    king, pairs, afters, free = deal.keyed_inside(present)
    outside = key & OUTSIDE
    if king >= 0:
        return [outside | afters[king] << PRESENT_AT]
    drawn, recycles = key >> DRAWN_AT & 31, key >> RECYCLES_AT & 15
    waste = left & ((1 << drawn) - 1)
    top = need = taken = 0
    if waste:
        top = waste.bit_length() - 1
        taken = present << PRESENT_AT | left ^ 1 << top | (waste ^ 1 << top).bit_length() << DRAWN_AT
        taken = _settled(deal, taken | recycles << RECYCLES_AT)
        need = partner_of(deal.order_values[top])
        if not need:
            return [taken]  # a king on top of the waste: removing it now never loses anything
    for i, value in pairs:
        if last_partners(deal, present, left, value):
            return [outside | afters[i] << PRESENT_AT]  # see :func:`last_partners`
    result = [outside | after << PRESENT_AT for after in afters]
    if waste:
        values = deal.pyramid_values
        for slot in free:
            if values[slot] == need:
                result.append(taken ^ 1 << PRESENT_AT + slot)
        rest = waste ^ 1 << top
        beneath = rest.bit_length() - 1
        if key >> FRESH_AT & 1 and beneath >= 0 and deal.order_values[beneath] == need:  # fresh: stock-waste pairs
            lower = rest ^ 1 << beneath
            below = present << PRESENT_AT | left ^ 1 << top ^ 1 << beneath | lower.bit_length() << DRAWN_AT
            result.append(_settled(deal, below | recycles << RECYCLES_AT))
    step = _stock_step(deal, key, left, drawn, recycles)
    if step >= 0:
        result.append(step)
    return result


def _stock_step(deal: Deal, key: int, left: int, drawn: int, recycles: int) -> int:
    """The key after drawing the next card or, with the stock empty, turning the waste over (-1: neither)."""
    stock = left >> drawn << drawn
    if stock:
        fresh = int(deal.waste_pairs) << FRESH_AT
        return key & ~(31 << DRAWN_AT) | (stock & -stock).bit_length() << DRAWN_AT | fresh
    if left and (deal.limit < 0 or recycles < deal.limit):
        turned = recycles + 1 if deal.limit >= 0 else 0
        return key & ~OUTSIDE | left | turned << RECYCLES_AT
    return -1


@lru_cache(maxsize=1 << 16)
def _first_of_value(order: tuple[Card, ...], left: int) -> dict[int, int]:
    """For each value among the remaining cards, the index of its first card."""
    first: dict[int, int] = {}
    index = 0
    while left:
        if left & 1:
            first.setdefault(card_value(order[index]), index)
        left >>= 1
        index += 1
    return first


def waste_top(position: Position) -> tuple[int, int]:
    """Indices of the waste top and the card beneath it (-1 where there is none)."""
    below = position.left & ((1 << position.drawn) - 1)
    if not below:
        return -1, -1
    top = below.bit_length() - 1
    rest = below & ~(1 << top)
    return top, (rest.bit_length() - 1 if rest else -1)


def moves(deal: Deal, position: Position) -> list[tuple[Move, Position]]:
    """Every legal move and the position it leads to; removals first (kings, then pairs), then draw, turn-over."""
    if won(position.present, position.left, deal.strict):
        return []
    present, left = position.present, position.left
    inside = deal.inside(present)
    if inside and isinstance(inside[0][0], RemoveKing):  # a free king: removing it now never loses anything
        return [(inside[0][0], normalise(deal, position._replace(present=inside[0][1])))]
    free = free_slots(present)
    if deal.pool:
        outside = _pool_removals(deal, position, free)
    else:
        outside = waste_removals(deal, position, free)
        if outside and isinstance(outside[0][0], RemoveKing):
            return [(outside[0][0], normalise(deal, outside[0][1]))]  # the same for a king on top of the waste
        outside.extend(stock_moves(deal, position))
    for move, after in inside:
        if isinstance(move, RemovePair) and last_partners(deal, present, left, card_value(move.first)):
            return [(move, normalise(deal, position._replace(present=after)))]  # see :func:`last_partners`
    result = pyramid_removals(deal, position)
    result += outside
    return [(m, normalise(deal, p)) for m, p in result] if deal.merges else result


def every_move(deal: Deal, position: Position) -> list[tuple[Move, Position]]:
    """Every legal move, without the shortcuts of :func:`moves` (which are safe for winning, not for counting
    moves: a king on the waste need not be removed at all on the shortest way)."""
    if won(position.present, position.left, deal.strict):
        return []
    free = free_slots(position.present)
    result = pyramid_removals(deal, position)
    if deal.pool:
        result.extend(_pool_removals(deal, position, free))
    else:
        result.extend(waste_removals(deal, position, free))
        result.extend(stock_moves(deal, position))
    return [(m, normalise(deal, p)) for m, p in result]


def last_partners(deal: Deal, present: int, left: int, value: int) -> bool:
    """Whether the only cards left of ``value`` and its partner value are one of each in the pyramid: two such
    free cards can only ever go together, so removing them now never loses anything."""
    low, high = value, partner_of(value)
    count = cards_in(present & (deal.pyramid_masks[low] | deal.pyramid_masks[high]))
    return count == 2 and not left & (deal.order_masks[low] | deal.order_masks[high])


def pyramid_removals(deal: Deal, position: Position) -> list[tuple[Move, Position]]:
    left, drawn, recycles, fresh = position.left, position.drawn, position.recycles, position.fresh
    return [
        (move, _new(Position, (after, left, drawn, recycles, fresh))) for move, after in deal.inside(position.present)
    ]


@lru_cache(maxsize=1 << 16)
def pyramid_only(pyramid: tuple[Card, ...], present: int, cover_pairs: bool) -> tuple[tuple[Move, int], ...]:
    """The removals inside the pyramid (kings, pairs, covering-card pairs) and the mask each leaves: the same
    whatever the stock and waste hold, so computed once per pyramid shape."""
    free = free_slots(present)
    result: list[tuple[Move, int]] = [
        (RemoveKing(pyramid[slot]), present & ~(1 << slot)) for slot in free if is_king(pyramid[slot])
    ]
    for i, a in enumerate(free):
        need = partner_of(card_value(pyramid[a]))
        for b in free[i + 1 :]:
            if card_value(pyramid[b]) == need:
                result.append((RemovePair(pyramid[a], pyramid[b]), present & ~(1 << a) & ~(1 << b)))
    if cover_pairs:
        for slot, cover in cover_pair_slots(present):
            if values_pair(card_value(pyramid[slot]), card_value(pyramid[cover])):
                result.append((RemovePair(pyramid[cover], pyramid[slot]), present & ~(1 << slot) & ~(1 << cover)))
    return tuple(result)


def inside_afters(values: tuple[int, ...], present: int, cover_pairs: bool) -> tuple[int, ...]:
    """The masks :func:`pyramid_only` leaves, in its order, from the pyramid's card ``values`` alone: no move is
    built (the A*'s estimate walks every pyramid a deal can reach, most of which its search never meets)."""
    free = free_slots(present)
    afters = [present & ~(1 << slot) for slot in free if values[slot] == KING_VALUE]
    for i, a in enumerate(free):
        need = partner_of(values[a])
        for b in free[i + 1 :]:
            if values[b] == need:
                afters.append(present & ~(1 << a) & ~(1 << b))
    if cover_pairs:
        for slot, cover in cover_pair_slots(present):
            if pair(values[slot], values[cover]):
                afters.append(present & ~(1 << slot) & ~(1 << cover))
    return tuple(afters)


def waste_removals(deal: Deal, position: Position, free: tuple[int, ...]) -> list[tuple[Move, Position]]:
    pyramid, order, rules, values = deal.pyramid, deal.order, deal.rules, deal.pyramid_values
    present, left = position.present, position.left
    result: list[tuple[Move, Position]] = []
    top, beneath = waste_top(position)
    if top >= 0:
        drawn, recycles = position.drawn, position.recycles
        taken = _new(Position, (present, left & ~(1 << top), drawn, recycles, False))
        top_card = order[top]
        need = partner_of(deal.order_values[top])
        if not need:
            result.append((RemoveKing(top_card), taken))
        else:
            for slot in free:
                if values[slot] == need:
                    after = _new(Position, (present & ~(1 << slot), taken.left, drawn, recycles, False))
                    result.append((RemovePair(pyramid[slot], top_card), after))
            if rules.stock_waste_pairs and position.fresh and beneath >= 0 and deal.order_values[beneath] == need:
                after = _new(Position, (present, taken.left & ~(1 << beneath), drawn, recycles, False))
                result.append((RemovePair(order[beneath], top_card), after))
    return result


def stock_moves(deal: Deal, position: Position) -> list[tuple[Move, Position]]:
    """Draw the next remaining card, or turn the waste over when the stock is empty and turn-overs are left."""
    left, limit = position.left, deal.rules.recycles
    stock = left >> position.drawn << position.drawn
    if stock:
        drawn = (stock & -stock).bit_length()
        return [(DRAW, _new(Position, (position.present, left, drawn, position.recycles, True)))]
    if left and (limit is None or position.recycles < limit):
        return [(RECYCLE, Position(position.present, left, 0, position.recycles + 1, False))]
    return []


def _pool_removals(deal: Deal, position: Position, free: tuple[int, ...]) -> list[tuple[Move, Position]]:
    """In the pool model a removal names the pool card; equal values are interchangeable, so only the first
    remaining card of each value is offered."""
    pyramid, order, present, left = deal.pyramid, deal.order, position.present, position.left
    first_of_value = _first_of_value(order, left)
    result: list[tuple[Move, Position]] = []
    king = first_of_value.get(KING_VALUE)
    if king is not None and deal.rules.strict_win:
        after_king = Position(present, left & ~(1 << king), position.drawn, position.recycles, position.fresh)
        result.append((RemoveKing(order[king]), after_king))
    for slot in free:
        partner = first_of_value.get(partner_of(card_value(pyramid[slot])))
        if partner is not None and partner != king:
            after = Position(
                present & ~(1 << slot), left & ~(1 << partner), position.drawn, position.recycles, position.fresh
            )
            result.append((RemovePair(pyramid[slot], order[partner]), after))
    return result
