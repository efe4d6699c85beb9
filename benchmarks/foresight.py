"""Fair play: how often the foresight screen holds honest wins (false positives) and bots' wins (its aim).

Usage: .venv/bin/python benchmarks/foresight.py [--rules N 2S] [--wins 100] [--seed 1] [--worlds 6]
       [--time-limit SECONDS] [--jobs 2] [--out FILE] | --judge FILE

For each rule set, deals seeded random deals the solver proves winnable and plays each with strategies that never
look ahead, until each rule set has ``--wins`` honest wins:

- ``greedy``: any removal there is (chosen at random), else a draw or a turn-over;
- ``random``: any legal move, at random (at most 600 moves);
- ``limited``: a solver limited to the cards seen: it plans the shortest line for a stock whose unseen cards are
  shuffled, and plans again whenever a card it did not expect is drawn.

and with the bots the screen is for: ``bot`` plays the deal's shortest line for the actual stock (the two-player
attack: the stock learned by another player), ``through`` draws the whole stock, turns it over and plays the
shortest line from there (every card seen first, legally). Every win is replayed by the engine and screened by
:func:`pyramide.solver.foresight.screen_win` with the time check off (``line_move_ms`` 0: the pace is judged apart,
see docs/fair-play.md), so the shares are the foresight check's alone. Prints per rule set and strategy the wins,
the share held (``foresight`` or ``not_decided``), the median and worst screen time (CPU seconds). Fails (exit 1)
when a screen raises or a line does not win.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.strategies import bot, greedy, limited, random_legal, through

from pyramide.engine import UNDO, DealCode, Game, Rules
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.solver import solve
from pyramide.solver.foresight import Foresight, foresaw, screen_win

HONEST = ("greedy", "random", "limited")
BOTS = ("bot", "through")


STRATEGIES = {"greedy": greedy, "random": random_legal, "limited": limited, "bot": bot, "through": through}


def screened(job: tuple[str, str, list[str], int, int, float]) -> dict[str, Any]:
    """One screen, in a worker: its answer and CPU seconds."""
    code, name, record, worlds, seed, limit = job
    started = time.process_time()
    answer = screen_win(code, record, 0, 0, worlds, seed, limit)
    return {"code": code, "name": name, "answer": answer, "cpu_s": time.process_time() - started}


def lines_for(segment: str, wins: int, seed: int) -> list[tuple[str, str, list[str]]]:
    """Each rule set's wins: ``wins`` honest ones in all, and both bots' on the same deals."""
    rules, rng = Rules.from_segment(segment), random.Random(seed)
    found: list[tuple[str, str, list[str]]] = []
    honest = 0
    while honest < wins:
        code = DealCode(rules, number=rng.randrange(DEAL_COUNT))
        if solve(Game(code), time_limit_s=10).winnable is not True:
            continue
        for name, play in STRATEGIES.items():
            line = play(code, random.Random(rng.random()))
            if line is None:
                continue
            replay = Game(code)
            for move in line:
                replay.play(move)
            if not replay.is_won:
                raise SystemExit(f"{name} on {code}: the line does not win")
            found.append((str(code), name, [m.notation() for m in line if m != UNDO]))
            honest += name in HONEST
    return found


def rejudged(result: dict[str, Any], seed: int) -> dict[str, Any]:
    """A saved screen (made with ``seed``) judged again by the current rule (:func:`foresaw`) from its figures:
    the measure is unchanged, only the thresholds may have moved."""
    answer = result["answer"]
    reasons = [r for r in answer["reasons"] if r != "foresight"]
    if answer["hidden_loss"] is not None:
        found = Foresight(answer["hidden_loss"], answer["world_losses"])
        if foresaw(found, DealCode.parse(result["code"]), answer["length"], seed)[0]:
            reasons.append("foresight")
    return {**result, "answer": {**answer, "reasons": reasons}}


def report(segment: str, results: list[dict[str, Any]]) -> None:
    """Per strategy: wins, the share held, the screens' CPU time; then the honest strategies together."""
    for name in (*HONEST, *BOTS):
        mine = [r for r in results if r["name"] == name]
        if not mine:
            continue
        held = [r for r in mine if r["answer"]["reasons"]]
        undecided = sum("not_decided" in r["answer"]["reasons"] for r in mine)
        cpu = [r["cpu_s"] for r in mine]
        print(
            f"{segment:3} {name:8} wins {len(mine):4}  held {len(held):4} ({100 * len(held) / len(mine):5.1f} %,"
            f" {undecided} not decided)  screen CPU median {statistics.median(cpu):.2f} s, worst {max(cpu):.2f} s",
            flush=True,
        )
    honest = [r for r in results if r["name"] in HONEST]
    count = sum(bool(r["answer"]["reasons"]) for r in honest)
    print(f"{segment:3} honest   wins {len(honest):4}  held {count:4} ({100 * count / len(honest):5.1f} %)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="+", default=["N", "2S"])
    parser.add_argument("--wins", type=int, default=100, help="honest wins per rule set")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=6)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", help="a file to write each screen to, a JSON line each")
    parser.add_argument("--judge", help="judge the screens an earlier --out wrote again, by the current rule")
    args = parser.parse_args()
    if args.judge:
        with open(args.judge, encoding="utf-8") as saved:
            kept = [json.loads(line) for line in saved]
        for segment in dict.fromkeys(r["rules"] for r in kept):
            mine = [r for r in kept if r["rules"] == segment]  # in the order screened: the seed is the index
            report(segment, [rejudged(r, index) for index, r in enumerate(mine)])
        return 0
    for segment in args.rules:
        lines = lines_for(segment, args.wins, args.seed)
        jobs = [
            (code, name, record, args.worlds, index, args.time_limit)
            for index, (code, name, record) in enumerate(lines)
        ]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(screened, jobs))
        if args.out:
            with open(args.out, "a", encoding="utf-8") as out:
                out.writelines(json.dumps({"rules": segment, **r}) + "\n" for r in results)
        report(segment, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
