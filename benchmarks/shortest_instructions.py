"""Shortest lines: instructions of the A* on fixed deals, for per-state work that timings blur.

Usage: .venv/bin/python benchmarks/shortest_instructions.py [--budget 300000] [CODE ...]

Runs the A* of :mod:`pyramide.solver.shortest` (what a par costs past deciding the deal) on each deal, within
``--budget`` positions (the solver pool's budget by default), in a child Python run under valgrind's callgrind, and
once more building the deals only; prints each deal's shortest length and the instructions of the searches: the
first run's total less the second's, which takes out the interpreter's start-up and imports. The same deals give
comparable counts across commits whatever the machine's load (the search is deterministic). The default deals are
seeded random winnable N and 2S deals whose search takes 0.05-0.4 s (``random.Random(7)``, six of each). Needs
valgrind; takes about six minutes.
"""

from __future__ import annotations

import argparse
import time

from pyramide.engine import DealCode, Game
from pyramide.solver.position import from_game
from pyramide.solver.shortest import shortest_line
from solver_instructions import child_instructions

DEALS = (
    "PY1-N-SZRRFEE", "PY1-N-HBLFTYB", "PY1-N-PEHGPGB", "PY1-N-FXLXVMS", "PY1-N-ZKJZOMH", "PY1-N-NEPFIPL",
    "PY1-2S-OXRMJZV", "PY1-2S-SZRRFEE", "PY1-2S-HBLFTYB", "PY1-2S-ANOKQUA", "PY1-2S-AZGOGPB", "PY1-2S-PEHGPGB",
)  # fmt: skip


def search_all(budget: int, codes: list[str]) -> None:
    """The child's work: each deal's A* within ``budget`` positions (none: the deals built only), its length."""
    for code in codes:
        deal, start = from_game(Game(DealCode.parse(code)), pooled=False)
        if budget:
            line = shortest_line(deal, start, budget, time.perf_counter() + 3600)
            print(f"{code}: {'no line' if line is None else f'{len(line)} moves'}")


def instructions(budget: int, codes: list[str]) -> tuple[int, str]:
    """The instructions a child searching ``codes`` to ``budget`` executed in all, and what it printed."""
    return child_instructions(__file__, ["--child", "--budget", str(budget), *codes])


def main() -> None:
    from pyramide.service.deals.analysis import HINT_BUDGET  # noqa: PLC0415 - not in the child, under callgrind

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("codes", nargs="*", default=list(DEALS))
    parser.add_argument("--budget", type=int, default=HINT_BUDGET)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        search_all(args.budget, args.codes)
        return
    total, printed = instructions(args.budget, args.codes)
    start_up, _ = instructions(0, args.codes)
    print(printed, end="")
    print(f"A* on {len(args.codes)} deals to {args.budget:,} positions: {(total - start_up) / 1e6:,.1f} M instructions")


if __name__ == "__main__":
    main()
