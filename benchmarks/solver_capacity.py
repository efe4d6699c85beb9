"""Solver capacity under abuse: do floods of hard public analyses starve players' hints?

Usage: .venv/bin/python benchmarks/solver_capacity.py [--seconds 30] [--attackers 16] [--players 4]

Starts `pyramide serve` (embedded Redis, default solver settings: cores - 1 workers, a queue of 8) in its own
process. ``--attackers`` clients ask, over and over, for analyses of fresh hard deals (rules 0SCW: often undecided in
the time limit), each the moment its last answer came; ``--players`` players meanwhile play ordinary N deals, asking
a hint before every move. Prints the share of hints decided (``winnable`` not null) within the solver's time limit
(goal >= 95 %), hint latency, what the attackers were answered, and the move route's p50 during it all.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import statistics
import time
from typing import Any

import httpx

from pyramide.engine import DealCode, Rules
from pyramide.engine.deal_codes import DEAL_COUNT
from service_load import BadAnswerError, choose_move, expect, no_limits_env, pyramide_serve, run_checked

HARD_RULES = Rules(recycles=0, stock_waste_pairs=True, cover_pairs=True, strict_win=True)


async def _attacker(url: str, index: int, until: float, answers: collections.Counter[str]) -> None:
    rng = random.Random(index)
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while time.monotonic() < until:
            code = DealCode(HARD_RULES, number=rng.randrange(DEAL_COUNT))
            response = await client.get(f"/v1/deals/{code}/analysis")
            if response.status_code not in (200, 503):  # 503 solver_busy is the pool refusing: what is measured
                raise BadAnswerError(f"an analysis answered {response.status_code}: {response.text[:300]}")
            body = response.json()
            if response.status_code == 200:
                answers["decided" if body["winnable"] is not None else "out of time"] += 1
            else:
                answers[f"{response.status_code} {body['code']}"] += 1
            if response.status_code != 200:
                await asyncio.sleep(float(response.headers.get("retry-after", "1")) / 10)


async def _player(url: str, index: int, until: float, out: dict[str, list[Any]]) -> None:
    rng = random.Random(1000 + index)
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        created = await client.post("/v1/players", json={})
        expect(created.status_code, 201, "creating a player", created.text)
        auth = {"Authorization": f"Bearer {created.json()['token']}"}
        while time.monotonic() < until:
            created = await client.post("/v1/games", json={}, headers=auth)
            expect(created.status_code, 201, "creating a game", created.text)
            game = created.json()
            legal = game["legal_moves"]
            while legal and time.monotonic() < until:
                started = time.monotonic()
                hint = await client.get(f"/v1/games/{game['id']}/hint", headers=auth)
                out["hint_s"].append(time.monotonic() - started)
                expect(hint.status_code, 200, "a hint", hint.text)
                out["hints"].append(hint.json()["winnable"] is not None)
                started = time.monotonic()
                move = await client.post(f"/v1/games/{game['id']}/moves", json=choose_move(legal, rng), headers=auth)
                out["move_s"].append(time.monotonic() - started)
                expect(move.status_code, 200, "a move", move.text)
                snapshot = move.json()
                legal = snapshot["legal_moves"] if snapshot.get("status") == "in_progress" else []


async def _run(url: str, args: argparse.Namespace) -> tuple[dict[str, list[Any]], collections.Counter[str]]:
    out: dict[str, list[Any]] = collections.defaultdict(list)
    answers: collections.Counter[str] = collections.Counter()
    until = time.monotonic() + args.seconds
    await asyncio.gather(
        *(_attacker(url, i, until, answers) for i in range(args.attackers)),
        *(_player(url, i, until, out) for i in range(args.players)),
    )
    return out, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--attackers", type=int, default=16)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    with pyramide_serve(no_limits_env()) as url:
        out, answers = asyncio.run(_run(url, args))
    decided = sum(out["hints"]) / max(1, len(out["hints"]))
    hint_s = sorted(out["hint_s"])
    print(f"{args.attackers} clients flooding hard 0SCW analyses, {args.players} players hinting, {args.seconds:.0f} s")
    print(f"  hints decided: {sum(out['hints'])} of {len(out['hints'])} = {decided:.1%} (goal >= 95 %)")
    print(f"  hint latency: p50 {statistics.median(hint_s) * 1000:.0f} ms, worst {hint_s[-1] * 1000:.0f} ms")
    print(f"  move route p50 meanwhile: {statistics.median(out['move_s']) * 1000:.1f} ms ({len(out['move_s'])} moves)")
    print(f"  analyses answered: {dict(answers)}")


if __name__ == "__main__":
    run_checked(main)
