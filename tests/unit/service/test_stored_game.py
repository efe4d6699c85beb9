"""The service's stored form of a game: its header round trips, and a cut or unknown one is refused."""

from __future__ import annotations

import struct
from typing import get_args
from uuid import UUID

import pytest

from pyramide.engine import DRAW, UNDO, Game, InvalidStateError, Status, dump_game, parse_move
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.status import GameStatus, ListFilter
from tests.support.layouts import EASY_CLEARING, dead_end_game, easy_game


def _stored() -> StoredGame:
    game = Game("PY1-N-AAAAAAS")
    game.play(DRAW)
    game.play(UNDO)
    return StoredGame(
        id=UUID(int=1, version=4), owner=UUID(int=2, version=4), game=game, version=7, created_ms=1_000,
        first_move_ms=2_000, settled=True,
    )  # fmt: skip


def test_the_header_round_trips() -> None:
    stored = _stored()
    again = StoredGame.from_bytes(stored.id, stored.to_bytes())
    assert again == stored
    assert (again.version, again.game.undos, again.settled, again.started, again.abandoned) == (7, 1, True, True, False)


def test_a_chosen_deal_round_trips_and_a_game_stored_before_it_reads_as_random() -> None:
    """Bit 5 says the game was dealt from a chosen deal (its par is worked out from the deal on, docs/par.md);
    every game stored before it reads as dealt at random, byte for byte as stored."""
    stored = _stored()
    plain = stored.to_bytes()
    assert not StoredGame.from_bytes(stored.id, plain).chosen
    stored.chosen = True
    chosen = stored.to_bytes()
    assert StoredGame.from_bytes(stored.id, chosen) == stored
    assert chosen[48] == plain[48] | 32 and chosen[:48] + chosen[49:] == plain[:48] + plain[49:]


def test_a_header_with_the_retired_undo_counter_is_refused_not_misread() -> None:
    """Bit 2 once put an undo counter after the header (written only in the project's first day, never released):
    such bytes are refused as damaged storage rather than read as some other game."""
    stored = _stored()
    header = struct.pack(">Q16sQQQB", 7, stored.owner.bytes, 1_000, 2_000, 0, 2 | 4) + struct.pack(">I", 1)
    with pytest.raises(InvalidStateError):
        StoredGame.from_bytes(stored.id, header + dump_game(stored.game))


def test_a_cut_header_is_refused() -> None:
    data = _stored().to_bytes()
    for size in (10, 49, 52):
        with pytest.raises(InvalidStateError):
            StoredGame.from_bytes(UUID(int=1, version=4), data[:size])


def test_a_challenge_game_round_trips_and_is_sealed_until_its_close() -> None:
    stored = _stored()
    stored.challenge, stored.sealed_until_ms = "2026-12-01-2S", 5_000
    again = StoredGame.from_bytes(stored.id, stored.to_bytes())
    assert again == stored
    assert again.sealed(4_999) and not again.sealed(5_000)
    assert not _stored().sealed(0), "an ordinary game is never sealed"
    with pytest.raises(InvalidStateError):
        StoredGame.from_bytes(stored.id, stored.to_bytes()[:70])


def test_a_challenge_game_keeps_its_operation_times_and_no_other_game_does() -> None:
    """Each operation's arrival (ms after the first move) is stored with a challenge game, and read back; a game
    that is no challenge's stores none, byte for byte as before."""
    stored = _stored()
    plain = stored.to_bytes()
    stored.note_operation(2_500)
    assert stored.times is None and stored.to_bytes() == plain
    stored.challenge, stored.sealed_until_ms = "2026-12-01-N", 9_000
    without = stored.to_bytes()
    for now in (2_000, 2_180, 2_900):
        stored.note_operation(now)
    again = StoredGame.from_bytes(stored.id, stored.to_bytes())
    assert again.times is not None and list(again.times) == [0, 180, 900]
    assert len(stored.to_bytes()) == len(without) + 4 + 3 * 4
    assert StoredGame.from_bytes(stored.id, without).times is None, "a challenge game stored before times had none"


def _won() -> Game:
    game = easy_game()
    for move in EASY_CLEARING.split():
        game.play(parse_move(move))
    return game


@pytest.mark.parametrize(
    ("game", "abandoned", "expected"),
    [
        (Game("PY1-N-AAAAAAS"), False, (GameStatus.IN_PROGRESS, False, False, GameStatus.IN_PROGRESS)),
        (dead_end_game(), False, (GameStatus.STUCK, False, True, GameStatus.LOST)),
        (_won(), False, (GameStatus.WON, True, True, GameStatus.WON)),
        (dead_end_game(), True, (GameStatus.ABANDONED, True, True, GameStatus.ABANDONED)),
        (Game("PY1-N-AAAAAAS"), True, (GameStatus.ABANDONED, True, True, GameStatus.ABANDONED)),
    ],
)
def test_the_stored_status_is_abandoned_over_the_engines_outcome(
    game: Game, abandoned: bool, expected: tuple[GameStatus, bool, bool, GameStatus]
) -> None:
    """Won and abandoned games are kept for good (``final``); a stuck one's result stands but undo may still play
    on (``decided`` only), and lists call it ``lost``."""
    stored = StoredGame(id=UUID(int=1, version=4), owner=UUID(int=2, version=4), game=game, abandoned=abandoned)
    status = stored.status
    assert (status, status.final, status.decided, status.listed) == expected


def test_every_engine_status_has_its_word_and_the_list_filter_names_the_listed_ones() -> None:
    assert [GameStatus.of(s) for s in Status] == [GameStatus(s.value) for s in Status]
    assert set(get_args(ListFilter)) == {"all"} | {s.listed for s in GameStatus}
