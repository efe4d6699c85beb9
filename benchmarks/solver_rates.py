"""Solver: win rates over random deals, and how long deciding takes.

Usage: .venv/bin/python benchmarks/solver_rates.py [--deals 10000] [--rules N C ... | all] [--budget 2000000]
       [--seed 1] [--time-limit SECONDS]

For each rule set, solves ``--deals`` seeded random deals from the start and prints the share that can be won (of
the deals decided within the budget), how many stayed undecided, the mean and worst time per deal and the mean
positions explored. The published rates over 100 million deals (solitairewinrates.com, Pyramid) are printed beside
ours for the two rule sets they cover.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time

from pyramide.engine import DealCode, Game, Rules
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.solver import solve

PUBLISHED = {"N": 66.87, "C": 83.15}  # clear the pyramid, unlimited turn-overs; without / with covering-card pairs


def run(rules: Rules, deals: int, budget: int, seed: int, time_limit_s: float | None) -> dict[str, float]:
    rng = random.Random(seed)
    won = lost = unknown = 0
    times, states = [], []
    for _ in range(deals):
        game = Game(DealCode(rules, number=rng.randrange(DEAL_COUNT)))
        started = time.perf_counter()
        analysis = solve(game, budget=budget, time_limit_s=time_limit_s)
        times.append(time.perf_counter() - started)
        states.append(analysis.states)
        if analysis.winnable is None:
            unknown += 1
        elif analysis.winnable:
            won += 1
        else:
            lost += 1
    decided = won + lost
    return {
        "rate": 100 * won / decided if decided else float("nan"),
        "unknown": unknown,
        "mean_ms": 1000 * statistics.fmean(times),
        "median_ms": 1000 * statistics.median(times),
        "worst_ms": 1000 * max(times),
        "total_s": sum(times),
        "states": statistics.fmean(states),
    }


def every_rule_set() -> list[str]:
    """Turn-overs 0, 1, 2 or unlimited × stock–waste pairing × covering-card pairing × strict win: 32 segments."""
    segments = []
    for recycles in (None, 0, 1, 2):
        for pairs, cover, strict in itertools.product((False, True), repeat=3):
            rules = Rules(recycles=recycles, stock_waste_pairs=pairs, cover_pairs=cover, strict_win=strict)
            segments.append(rules.segment)
    return segments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument(
        "--rules", nargs="+", default=["N", "C"], help="rule-set segments, or `all` for every preset and variant"
    )
    parser.add_argument("--budget", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per deal (then undecided)")
    args = parser.parse_args()
    print(f"{args.deals} random deals per rule set (seed {args.seed}), budget {args.budget:,} positions a deal")
    print("| rules | winnable | published | undecided | mean ms | median ms | worst ms | total s | positions |")
    print("|---|---|---|---|---|---|---|---|---|")
    for segment in every_rule_set() if args.rules == ["all"] else args.rules:
        row = run(Rules.from_segment(segment), args.deals, args.budget, args.seed, args.time_limit)
        published = f"{PUBLISHED[segment]:.2f}%" if segment in PUBLISHED else ""
        print(
            f"| {segment} | {row['rate']:.2f}% | {published} | {row['unknown']:.0f} | {row['mean_ms']:.1f} | "
            f"{row['median_ms']:.1f} | {row['worst_ms']:.0f} | {row['total_s']:.1f} | {row['states']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
