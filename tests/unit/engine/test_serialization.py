"""The stored form of a game: exact, compact, versioned, and refusing anything damaged."""

from __future__ import annotations

import random

import pytest

from pyramide.engine import (
    DRAW,
    RECYCLE,
    UNDO,
    DealCode,
    Game,
    InvalidStateError,
    Rules,
    dump_game,
    load_game,
    parse_card,
    tap_card,
)
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.rules import all_rule_sets
from tests.support.layouts import doc_game


def _long_game(seed: int, moves: int = 400) -> Game:
    rng = random.Random(seed)
    game = Game(DealCode(rng.choice(all_rule_sets()), number=rng.randrange(DEAL_COUNT)), explain_errors=True)
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            break
        game.play(rng.choice(legal))
        if rng.random() < 0.1 and not game.is_won:
            game.play(UNDO)
    return game


@pytest.mark.parametrize("seed", range(40))
def test_long_games_round_trip_with_their_whole_undo_history(seed: int) -> None:
    game = _long_game(seed)
    data = dump_game(game)
    restored = load_game(data)
    assert restored == game
    assert dump_game(restored) == data
    while restored.undo_available:
        game.play(UNDO)
        restored.play(UNDO)
        assert restored == game


@pytest.mark.parametrize(("game", "limit"), [(doc_game(), 409), (Game("PY1-SCW-ABCDEFG"), 359)])
def test_a_full_undo_history_stays_small(game: Game, limit: int) -> None:
    while game.undo_available < 100:
        game.play(DRAW if game.stock else game.legal_moves()[-1])
    assert len(dump_game(game)) <= limit


def test_unlimited_turn_overs_survive_past_255() -> None:
    game = Game("PY1-N-AAAAAAS")
    for _ in range(300):
        while game.stock_count:
            game.play(DRAW)
        game.play(RECYCLE)
    restored = load_game(dump_game(game))
    assert restored.recycles_used == 300
    assert restored == game


def test_selection_and_settings_survive() -> None:
    game = doc_game(Rules(recycles=3, cover_pairs=True), explain_errors=True)
    tap_card(game, parse_card("7C"))
    restored = load_game(dump_game(game))
    assert restored.selection == parse_card("7C") and restored.explain_errors
    assert restored.rules == Rules(recycles=3, cover_pairs=True)
    assert str(restored.code) == str(game.code)


def test_undo_depth_is_the_last_100_operations() -> None:
    game = doc_game()
    for _ in range(130):
        game.play(game.legal_moves()[-1])
    assert game.undo_available == 100
    for _ in range(100):
        game.play(UNDO)
    assert game.undo_available == 0 and game.moves == 130
    with pytest.raises(Exception, match="nothing_to_undo"):
        game.play(UNDO)


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b"",
        lambda b: b"\x04" + b[1:],  # a format not yet written
        lambda b: b"\x01" + b[1:],  # a format never released (the first day's), no longer read
        lambda b: b[:-1],
        lambda b: b + b"\x00",
        lambda b: b[:10],
        lambda b: b[:8] + bytes([b[8] ^ 1]) + b[9:],
        lambda b: b[:22] + b"\xff" + b[23:],
        "not bytes",
    ],
)
def test_damaged_bytes_are_refused(damage) -> None:
    data = dump_game(_long_game(3, 60))
    broken = damage if isinstance(damage, str) else damage(data)
    with pytest.raises(InvalidStateError) as error:
        load_game(broken)  # type: ignore[arg-type]
    assert error.value.code == "invalid_state"


def test_random_corruption_is_always_refused() -> None:
    rng = random.Random(7)
    data = dump_game(_long_game(11, 200))
    for _ in range(2000):
        broken = bytearray(data)
        position = rng.randrange(len(broken))
        broken[position] ^= rng.randrange(1, 256)
        with pytest.raises(InvalidStateError):
            load_game(bytes(broken))
