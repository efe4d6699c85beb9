"""Par: how many random deals of each preset get a par within the service's default budget, and how long it takes.

Usage: .venv/bin/python benchmarks/par.py [--deals 1000] [--seed 1] [--presets N 2S ...]

For each preset of the rules catalogue, ``--deals`` seeded random deals are each given to the very search the
service's background par task runs (:func:`pyramide.solver.worker.analyse_state` with a shortest line, the solver
pool's position budget and its default time limit), one at a time on one core. Prints, per preset, the share of deals
whose par is known (a shortest winning line found), lost (proved unwinnable) and unknown (not decided within the
budget or time), and the median and worst time per deal.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pyramide.engine import DealCode, Game, dump_game
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.service.deals.analysis import HINT_BUDGET, TIME_LIMIT_S
from pyramide.service.deals.catalogue import PRESETS
from pyramide.service.deals.par import ParStatus, par_of
from pyramide.service.deals.schemas import DealAnalysis
from pyramide.solver.worker import analyse_state


def measure(segment: str, deals: int, seed: int) -> str:
    """One preset's line of figures."""
    rules = PRESETS[segment][0]
    rng = random.Random(seed)
    counts = dict.fromkeys(ParStatus, 0)
    times: list[float] = []
    for _ in range(deals):
        code = DealCode(rules, number=rng.randrange(DEAL_COUNT))
        started = time.perf_counter()
        answer = analyse_state(dump_game(Game(code)), HINT_BUDGET, TIME_LIMIT_S, True)
        times.append(time.perf_counter() - started)
        counts[par_of(DealAnalysis.model_validate({**answer, "code": str(code)})).status] += 1
    share = {status: 100 * count / deals for status, count in counts.items()}
    return (
        f"{segment:>4}  par known {share[ParStatus.KNOWN]:5.1f} %  unwinnable {share[ParStatus.UNWINNABLE]:5.1f} %"
        f"  unknown {share[ParStatus.UNKNOWN]:5.1f} %  median {statistics.median(times) * 1000:7.1f} ms"
        f"  worst {max(times) * 1000:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=1000, help="random deals per preset")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--presets", nargs="*", default=list(PRESETS), help="segments of the rules catalogue")
    args = parser.parse_args()
    print(f"{args.deals} deals per preset, budget {HINT_BUDGET} positions, time limit {TIME_LIMIT_S} s")
    for segment in args.presets:
        print(measure(segment, args.deals, args.seed), flush=True)


if __name__ == "__main__":
    main()
