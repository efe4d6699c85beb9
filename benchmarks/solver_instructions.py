"""Solver: instructions to search a fixed number of positions, for per-position work that timings blur.

Usage: .venv/bin/python benchmarks/solver_instructions.py [--budget 300000] [CODE ...]

Solves each deal (by default the two hard one-turn-over deals docs/benchmarks.md names) to at most ``--budget``
positions in a child Python run under valgrind's callgrind, and once more with a budget of one position; prints the
positions searched and the instructions of the solves: the first run's total less the second's, which takes out
the interpreter's start-up and imports. The same positions give comparable counts across commits whatever the
machine's load. Needs valgrind; takes a few minutes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from pyramide.engine import DealCode, Game
from pyramide.solver import solve

DEALS = ("PY1-1S-XRQIIST", "PY1-2C-DFYDVMD")


def solve_all(budget: int, codes: list[str]) -> None:
    """The child's work: solve each deal within ``budget`` positions and print what was searched."""
    for code in codes:
        analysis = solve(Game(DealCode.parse(code)), budget=budget)
        print(f"{code}: {analysis.states:,} positions, winnable {analysis.winnable}")


def child_instructions(script: str, arguments: list[str]) -> tuple[int, str]:
    """The instructions a child Python running ``script`` with ``arguments`` executed in all under callgrind, and
    what it printed (the one copy of this for the benchmarks that count a child's instructions)."""
    with tempfile.TemporaryDirectory() as data:
        out = Path(data) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no"]
        command += [sys.executable, script, *arguments]
        printed = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        for line in out.read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1]), printed
    raise RuntimeError("callgrind wrote no counts")


def instructions(budget: int, codes: list[str]) -> tuple[int, str]:
    """The instructions a child solving ``codes`` to ``budget`` executed in all, and what it printed."""
    return child_instructions(__file__, ["--child", "--budget", str(budget), *codes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("codes", nargs="*", default=list(DEALS))
    parser.add_argument("--budget", type=int, default=300_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        solve_all(args.budget, args.codes)
        return
    total, printed = instructions(args.budget, args.codes)
    start_up, _ = instructions(1, args.codes)
    print(printed, end="")
    print(f"solves to {args.budget:,} positions: {(total - start_up) / 1e6:,.1f} M instructions")


if __name__ == "__main__":
    main()
