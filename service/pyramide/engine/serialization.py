"""A game's complete state as compact, versioned bytes, undo history included, for storing in Redis.

Format 3 (all integers unsigned, big-endian):

====================  ===================================================================================
``B`` format          3 (formats 1 and 2 were written only in the project's first day, before any
                      release, and are not read)
``B`` rules           turn-overs 0..9 or 15 for unlimited in bits 0-3; bit 4 stock–waste pairs; bit 5
                      cover pairs; bit 6 strict win
``B`` flags           bit 0 error explanations on; bit 1 the waste top was just drawn; bit 2 the code is a
                      layout's long form (else a deal number follows)
``5s`` deal number    for deal-number codes (the cards are dealt again from it), else
``B`` + 52 ``B``      for a layout's long form: its waste count, then its cards: pyramid, waste, stock
``I`` present         bit ``s`` set while pyramid slot ``s`` holds its card
``I`` moves           the move counter
``I`` turn-overs      used so far
``I`` undos           taken so far
``B`` selection       a card, or 255 for none
``B`` + cards         the stock, the next card to draw last
``B`` + cards         the waste, bottom to top
``B`` + records       the undo history, oldest first, 3 bytes an operation (see ``pack_operation``)
``I`` CRC-32          of everything before it, so that damaged storage is refused rather than played
====================  ===================================================================================

A game with a full undo history takes at most 359 bytes (409 for a layout chosen by hand).
"""

from __future__ import annotations

import zlib
from functools import lru_cache

from pyramide.engine.cards import Card
from pyramide.engine.deal_codes import DealCode
from pyramide.engine.errors import InvalidInputError, InvalidStateError
from pyramide.engine.game import HISTORY_LIMIT, Game, slot_table
from pyramide.engine.layout import Layout
from pyramide.engine.operations import RECORD_SIZE
from pyramide.engine.pyramid import FULL, SLOTS
from pyramide.engine.rules import Rules
from pyramide.engine.taps import is_selectable_partner

FORMAT = 3
NO_CARD = 255
UNLIMITED = 15


def _rules_byte(rules: Rules) -> int:
    recycles = UNLIMITED if rules.recycles is None else rules.recycles
    return recycles | rules.stock_waste_pairs << 4 | rules.cover_pairs << 5 | rules.strict_win << 6


@lru_cache(maxsize=128)
def _rules_from_byte(value: int) -> Rules:
    recycles = value & 15
    return Rules(
        recycles=None if recycles == UNLIMITED else recycles,
        stock_waste_pairs=bool(value & 16),
        cover_pairs=bool(value & 32),
        strict_win=bool(value & 64),
    )


def dump_game(game: Game) -> bytes:
    """The game as bytes; :func:`load_game` gives back an equal game."""
    code, layout = game.code, game.layout
    is_layout_code = code.layout is not None
    out = bytearray((FORMAT, _rules_byte(game.rules), game.explain_errors | game.fresh_draw << 1 | is_layout_code << 2))
    if code.number is not None:
        out += code.number.to_bytes(5, "big")
    else:
        out.append(len(layout.waste))
        out += bytes((*layout.pyramid, *layout.waste, *layout.stock))
    out += game.present.to_bytes(4, "big")
    out += game.moves.to_bytes(4, "big")
    selection = NO_CARD if game.selection is None else game.selection
    out += game.recycles_used.to_bytes(4, "big")
    out += game.undos.to_bytes(4, "big")
    out += bytes((selection, len(game._stock), *game._stock, len(game._waste), *game._waste))
    out.append(len(game._history) // RECORD_SIZE)
    out += game._history
    out += zlib.crc32(out).to_bytes(4, "big")
    return bytes(out)


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, size: int) -> bytes:
        end = self.pos + size
        if end > len(self.data):
            raise InvalidStateError("the stored state is cut short")
        chunk, self.pos = self.data[self.pos : end], end
        return chunk

    def byte(self) -> int:
        return self.take(1)[0]

    def card(self, value: int) -> Card:
        if value >= 52:
            raise InvalidStateError("the stored state names a card that does not exist")
        return Card(value)

    def cards(self, size: int) -> list[Card]:
        chunk = self.take(size)
        if chunk and max(chunk) >= 52:
            raise InvalidStateError("the stored state names a card that does not exist")
        return list(map(Card, chunk))


def load_game(data: bytes) -> Game:
    """The game :func:`dump_game` wrote; :class:`InvalidStateError` for bytes that are not such a game."""
    if not isinstance(data, bytes | bytearray) or not data or data[0] != FORMAT:
        raise InvalidStateError("not a stored game of a known format")
    body, checksum = bytes(data[:-4]), data[-4:]
    if len(data) < 5 or zlib.crc32(body) != int.from_bytes(checksum, "big"):
        raise InvalidStateError("the stored game fails its checksum")
    try:
        return _load(_Reader(body))
    except InvalidStateError:
        raise
    except InvalidInputError as error:
        raise InvalidStateError(f"the stored game is inconsistent: {error.detail}") from None


def _load(reader: _Reader) -> Game:
    reader.byte()  # the format, checked by load_game
    rules = _rules_from_byte(reader.byte())
    flags = reader.byte()
    try:
        if flags & 4:
            waste_count = reader.byte()
            deck = reader.cards(52)
            split = SLOTS + waste_count
            code = DealCode(rules, layout=Layout(tuple(deck[:SLOTS]), tuple(deck[SLOTS:split]), tuple(deck[split:])))
        else:
            code = DealCode(rules, number=int.from_bytes(reader.take(5), "big"))
    except ValueError as error:
        raise InvalidStateError(str(error)) from None
    layout = code.deal()
    game = Game.__new__(Game)
    game.code, game.rules, game.layout = code, rules, layout
    game.slots = slot_table(layout.pyramid)
    game.present = int.from_bytes(reader.take(4), "big")
    game.moves = int.from_bytes(reader.take(4), "big")
    game.recycles_used = int.from_bytes(reader.take(4), "big")
    game.undos = int.from_bytes(reader.take(4), "big")
    selection = reader.byte()
    game.selection = None if selection == NO_CARD else reader.card(selection)
    game._stock = reader.cards(reader.byte())
    game._waste = reader.cards(reader.byte())
    game.explain_errors, game.fresh_draw = bool(flags & 1), bool(flags & 2)
    operations = reader.byte()
    game._history = bytearray(reader.take(operations * RECORD_SIZE))
    game._outcome = None
    if reader.pos != len(reader.data) or operations > HISTORY_LIMIT:
        raise InvalidStateError("the stored state has trailing or excess data")
    _check_consistent(game)
    return game


def _check_consistent(game: Game) -> None:
    """Reject states no sequence of moves can reach in their shape: cards lost or doubled, impossible counters."""
    loose = game._stock + game._waste
    if game.present & ~FULL or len(set(loose)) != len(loose) or any(game.slots[c] >= 0 for c in loose):
        raise InvalidStateError("the stored table does not match its deal")
    limit = game.rules.recycles
    if limit is not None and game.recycles_used > limit:
        raise InvalidStateError("the stored game used more turn-overs than its rules allow")
    selection = game.selection
    if selection is not None and not (game.is_free(selection) or is_selectable_partner(game, selection)):
        raise InvalidStateError("the stored selection is neither a free card nor a partner tapped first")
