"""What a solver worker process runs, for the service's pool (``pyramide.service.deals.analysis``): here, apart from
the service, because a worker unpickles these by module name and so imports their module; the service's would bring
in Redis's client and the rest, and a new worker (the first, or one replacing a dead one) would take about three
times as long to be up."""

from __future__ import annotations

from typing import Any

from pyramide.engine import load_game
from pyramide.solver.search import solve


def analyse_state(state: bytes, budget: int, time_limit_s: float, shortest: bool = False) -> dict[str, Any]:
    """The analysis of a stored game state (with ``shortest``, a shortest winning line too) as JSON, stopping by
    itself at the time limit."""
    return solve(load_game(state), budget=budget, time_limit_s=time_limit_s, shortest=shortest).to_json()


def started() -> bool:
    """Nothing, so that awaiting it waits for a worker to be up."""
    return True
