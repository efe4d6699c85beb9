"""Engine throughput: apply a move, serialise the state and parse it back, as a stateless service does per request.

Usage: .venv/bin/python benchmarks/engine_throughput.py [--games 200] [--rounds 7]  (after scripts/test or scripts/run)

Replays pre-recorded random games (seeded, so every run measures the same work) through
``load_game → play → dump_game`` on one core and prints the median over the rounds. The goal from the engine issue
is at least 20,000 such cycles per second.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pyramide.engine import UNDO, DealCode, Game, Move, all_rule_sets, dump_game, load_game
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.dealing import deal_layout

GOAL_PER_SECOND = 20_000


def record_games(count: int, seed: int = 2026) -> list[tuple[Game, list[Move]]]:
    """Random legal games (with some undos), as their start and their moves."""
    rng = random.Random(seed)
    rule_sets = all_rule_sets()
    games = []
    for _ in range(count):
        start = Game(DealCode(rng.choice(rule_sets), number=rng.randrange(DEAL_COUNT)))
        game, moves = start.copy(), []
        for _ in range(rng.randrange(50, 250)):
            legal = game.legal_moves()
            if not legal:
                break
            move = UNDO if game.history and rng.random() < 0.05 else rng.choice(legal)
            game.play(move)
            moves.append(move)
        games.append((start, moves))
    return games


def one_round(games: list[tuple[Game, list[Move]]], cold: bool = False) -> tuple[int, float, float, float]:
    """Moves played, and seconds spent in load, play and dump. ``cold`` empties the deal cache before every load,
    as for a game this process has not seen yet."""
    count, loading, playing, dumping = 0, 0.0, 0.0, 0.0
    clock = time.perf_counter
    for start, moves in games:
        data = dump_game(start)
        for move in moves:
            if cold:
                deal_layout.cache_clear()
            t0 = clock()
            game = load_game(data)
            t1 = clock()
            game.play(move)
            t2 = clock()
            data = dump_game(game)
            t3 = clock()
            loading, playing, dumping = loading + t1 - t0, playing + t2 - t1, dumping + t3 - t2
            count += 1
    return count, loading, playing, dumping


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    games = record_games(args.games)
    one_round(games)  # warm-up: fills the deal cache as a running service would be
    rounds = [one_round(games) for _ in range(args.rounds)]
    moves = rounds[0][0]
    per_second = [n / (a + b + c) for n, a, b, c in rounds]
    median = statistics.median(per_second)
    print(f"moves per round: {moves} ({args.games} games), rounds: {args.rounds}")
    print(f"load + play + dump: median {median:,.0f}/s (min {min(per_second):,.0f}, max {max(per_second):,.0f})")
    for name, index in (("load_game", 1), ("play", 2), ("dump_game", 3)):
        micros = statistics.median(r[index] / r[0] * 1e6 for r in rounds)
        print(f"  {name:<10} median {micros:6.2f} µs per move")
    cold = [one_round(games, cold=True) for _ in range(3)]
    cold_median = statistics.median(n / (a + b + c) for n, a, b, c in cold)
    print(f"the same with a cold deal cache (every load deals again): median {cold_median:,.0f}/s")
    size = statistics.median(len(dump_game(_final(start, moves))) for start, moves in games)
    print(f"stored state: median {size:.0f} bytes")
    verdict = "met" if median >= GOAL_PER_SECOND else "NOT met"
    print(f"goal {GOAL_PER_SECOND:,}/s: {verdict} ({median / GOAL_PER_SECOND:.2f}x)")


def _final(start: Game, moves: list[Move]) -> Game:
    game = start.copy()
    for move in moves:
        game.play(move)
    return game


if __name__ == "__main__":
    main()
