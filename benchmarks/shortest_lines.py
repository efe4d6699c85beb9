"""Solver: how long a shortest winning line takes, under each rule set asked for.

Usage: .venv/bin/python benchmarks/shortest_lines.py [--rules 2S N C 2 0 1] [--deals 200] [--seed 1]
       [--time-limit SECONDS] [--budget STATES] [--slow SECONDS]

For each rule set, deals seeded random deals, keeps the first ``--deals`` the solver proves winnable, and times the
A* search for a winning line with the fewest moves (removals, draws and turn-overs) on each, from the deal, on one
core, within the solver's default position budget (``--budget``) and ``--time-limit``. Each rule set runs in a
process of its own, so its peak memory (maximum resident set) is its own. Prints, per rule set, the median, mean and
worst time, how many deals found no line within the limits, the peak memory and the lengths found. Every line is
replayed in the engine and must win. A deal slower than ``--slow`` seconds is printed as it finishes.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time

from pyramide.engine import DealCode, Game, Rules
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.solver import solve
from pyramide.solver.position import from_game
from pyramide.solver.search import DEFAULT_BUDGET
from pyramide.solver.shortest import shortest_line


def measure(segment: str, args: argparse.Namespace) -> dict[str, object]:
    """The figures for one rule set, in this process."""
    rules = Rules.from_segment(segment)
    deals, time_limit, budget, slow = args.deals, args.time_limit, args.budget, args.slow
    rng = random.Random(args.seed)
    times: list[float] = []
    lengths: list[int] = []
    over = 0
    while len(times) < deals:
        game = Game(DealCode(rules, number=rng.randrange(DEAL_COUNT)))
        if solve(game, time_limit_s=10).winnable is not True:
            continue
        deal, start = from_game(game, pooled=False)
        started = time.perf_counter()
        line = shortest_line(deal, start, budget, started + time_limit)
        times.append(time.perf_counter() - started)
        if times[-1] > slow:
            found = "no line (a limit)" if line is None else f"{len(line)} moves"
            print(f"  {game.code}: {times[-1]:.1f} s, {found}", file=sys.stderr, flush=True)
        if line is None:
            over += 1
            continue
        replay = game.copy()
        for move in line:
            replay.play(move)
        assert replay.is_won, game.code
        lengths.append(len(line))
    return {
        "rules": segment,
        "deals": deals,
        "median_s": statistics.median(times),
        "mean_s": statistics.fmean(times),
        "worst_s": max(times),
        "over": over,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "moves": [min(lengths, default=0), statistics.median(lengths) if lengths else 0, max(lengths, default=0)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="+", default=["2S", "N", "C", "2", "0", "1"])
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per deal (then counted as over)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="states per deal (then counted as over)")
    parser.add_argument("--slow", type=float, default=10.0, help="print each deal slower than this many seconds")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process: one rule set
    args = parser.parse_args()
    if args.one:
        figures = measure(args.rules[0], args)
        print(json.dumps(figures))
        return
    print(f"winnable deals per rule set: {args.deals} (seed {args.seed}); limits {args.time_limit:.0f} s, "
          f"{args.budget:,} positions a deal")  # fmt: skip
    print("| rules | median | mean | worst | no line within the limits | peak memory | moves (min, median, max) |")
    print("|---|---|---|---|---|---|---|")
    for segment in args.rules:
        command = [sys.executable, __file__, "--one", "--rules", segment, "--deals", str(args.deals)]
        command += ["--seed", str(args.seed), "--time-limit", str(args.time_limit), "--budget", str(args.budget)]
        command += ["--slow", str(args.slow)]
        result = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)
        low, middle, high = result["moves"]
        print(
            f"| {segment} | {result['median_s']:.3f} s | {result['mean_s']:.3f} s | {result['worst_s']:.2f} s | "
            f"{result['over']} | {result['peak_mb']:.0f} MB | {low}, {middle:.0f}, {high} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
