"""`pyramide serve --workers auto` sized from the CPU budget, played for real (issue 56, "Sizing ignores the
container": pinned to one CPU it still started 2 workers, one per core of the machine, each with its own solver
pool). Started through ``taskset -c 0``, it says its figures in one line at start, serves HTTP from one process, and
that process's solver pool grows to the budget's two processes (one for every search, one for players) and no
further, however many searches come at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil

from pyramide.engine import random_deal_code
from tests.support.serving import Served, serving
from tests.support.waiting import eventually

SLOW = "PY1-2SC-VWUCSWC"
"""A deal whose analysis searches for about 1.5 s of one core (as in test_solver_pool.py): a search surely still
running when a player's hint comes."""

ENV = {"PYRAMIDE_SOLVER_TIME_LIMIT_S": "2", "PYRAMIDE_LIMIT_HINTS": "0", "PYRAMIDE_LIMIT_ANALYSES": "0"}


def _listeners(served: Served) -> list[int]:
    """The processes of the server's family that accept HTTP connections: those listening on its port (uvicorn's
    workers of ``--workers N`` listen on the socket their parent bound, beside it)."""
    port = urlsplit(served.url).port
    found = []
    for process in served.family():
        with suppress(psutil.NoSuchProcess):
            connections = process.net_connections(kind="tcp")
            if any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in connections):
                found.append(process.pid)
    return found


def _solver_processes(served: Served) -> list[psutil.Process]:
    """The solver processes of the server's whole family (started by multiprocessing's spawn, not listening)."""
    http = set(_listeners(served))
    found = []
    for process in served.family():
        with suppress(psutil.NoSuchProcess):
            spawned = "multiprocessing.spawn" in " ".join(process.cmdline())
            if spawned and process.pid not in http and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
    return found


def _cpu_seconds(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        with suppress(psutil.NoSuchProcess):
            total += sum(process.cpu_times()[:2])
    return total


def _start_figures(served: Served) -> dict[str, Any]:
    """The fields of the one line `pyramide serve` logs at start about its CPU budget and what it sized by it."""
    lines = [line for line in served.lines() if "cpu_budget" in line]
    assert len(lines) == 1, f"one line of figures at start, not {len(lines)}: {served.log.read_text()[-2000:]}"
    return lines[0]


def _player_hint(client: httpx.Client) -> str:
    """A fresh player's game and the path of its hint."""
    token = client.post("/v1/players", json={}).json()["token"]
    client.headers["Authorization"] = f"Bearer {token}"
    game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}).json()["id"]
    return f"/v1/games/{game}/hint"


def test_pinned_to_one_cpu_auto_serves_from_one_process_with_a_pool_of_two(tmp_path: Path) -> None:
    with serving(tmp_path / "data", tmp_path, "--workers", "auto", env=ENV, wrapper=("taskset", "-c", "0")) as served:
        assert psutil.Process(served.process.pid).cpu_affinity() == [0], "taskset runs the server itself, pinned"
        assert _listeners(served) == [served.process.pid], "one process serves HTTP: the server, no worker beside it"
        figures = _start_figures(served)
        assert figures["cpu_affinity"] == 1 and figures["cpu_budget"] == 1, figures
        assert (figures["http_workers"], figures["solver_processes_per_worker"], figures["solver_processes"]) == (
            1,
            2,
            2,
        ), figures

        with httpx.Client(base_url=served.url, timeout=30) as client:
            hint = _player_hint(client)
            assert client.get(f"/v1/deals/{random_deal_code()}/analysis").status_code == 200  # the pool is up
            first = eventually(lambda: _solver_processes(served), 10, what="the solver pool's first process")
            idle = _cpu_seconds(first)
            with ThreadPoolExecutor(8) as background:
                slow = background.submit(httpx.get, f"{served.url}/v1/deals/{SLOW}/analysis", timeout=30)
                eventually(lambda: _cpu_seconds(first) - idle >= 0.05, 10, what="the slow analysis searching")
                assert client.get(hint).status_code == 200, "a player's hint beside it, on the pool's second process"
                analyses = [f"{served.url}/v1/deals/{random_deal_code()}/analysis" for _ in range(6)]
                more = [background.submit(httpx.get, url, timeout=30) for url in analyses]
                answers = [slow.result().status_code, *(answer.result().status_code for answer in more)]
        assert set(answers) <= {200, 503}, answers
        solvers = _solver_processes(served)
        assert len(solvers) == 2, [(p.pid, p.cmdline()) for p in solvers]
        assert {p.ppid() for p in solvers} == {served.process.pid}, "the server's own pool, the only one"
