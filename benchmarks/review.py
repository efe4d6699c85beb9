"""Review time: how long `GET /v1/games/{id}/review` takes for finished games, computed and then kept.

Usage: .venv/bin/python benchmarks/review.py [--games 100] [--seed 1]

Starts `pyramide serve` (embedded Redis, default solver settings) in its own process. One player plays ``--games``
fresh random deals under the default rules (N) through the API, a random removal while there is one, else the draw
or turn-over, until the game is won or stuck (or abandons it after 300 operations), then asks for its review twice,
one request at a time. Prints the first request's time (the solver works the review out: median and worst), the
second's (read from Redis), the share of positions decided within the solver's time limit, and the games' lengths.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import httpx

from service_load import choose_move, expect, no_limits_env, pyramide_serve, run_checked

MAX_OPERATIONS = 300


def _finished_game(client: httpx.Client, auth: dict[str, str], rng: random.Random) -> str:
    """A fresh game played to its end (won, stuck, or abandoned after :data:`MAX_OPERATIONS`)."""
    created = client.post("/v1/games", json={}, headers=auth)
    expect(created.status_code, 201, "creating a game", created.text)
    game: dict[str, Any] = created.json()
    for _ in range(MAX_OPERATIONS):
        if game["status"] != "in_progress":
            return str(game["id"])
        move = choose_move(game["legal_moves"], rng)
        answer = client.post(f"/v1/games/{game['id']}/moves", json=move, headers=auth)
        expect(answer.status_code, 200, "a move", answer.text)
        game = answer.json()
    abandoned = client.post(f"/v1/games/{game['id']}/abandon", headers=auth)
    expect(abandoned.status_code, 200, "abandoning a game", abandoned.text)
    return str(game["id"])


def _timed_review(client: httpx.Client, auth: dict[str, str], game_id: str) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    response = client.get(f"/v1/games/{game_id}/review", headers=auth)
    elapsed = time.perf_counter() - started
    expect(response.status_code, 200, "a review", response.text)
    return elapsed, response.json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    limits = no_limits_env()
    first: list[float] = []
    kept: list[float] = []
    decided = positions = 0
    statuses: dict[str, int] = {}
    with pyramide_serve(limits) as url, httpx.Client(base_url=url, timeout=60) as client:
        player = client.post("/v1/players", json={})
        expect(player.status_code, 201, "creating a player", player.text)
        auth = {"Authorization": f"Bearer {player.json()['token']}"}
        for _ in range(args.games):
            game_id = _finished_game(client, auth, rng)
            elapsed, review = _timed_review(client, auth, game_id)
            first.append(elapsed)
            kept.append(_timed_review(client, auth, game_id)[0])
            positions += len(review["positions"])
            decided += sum(p["winnable"] is not None for p in review["positions"])
            statuses[review["status"]] = statuses.get(review["status"], 0) + 1
    print(f"review of {args.games} finished games (rules N, random play; {statuses}), one request at a time")
    print(f"  computed: median {statistics.median(first) * 1000:.0f} ms, worst {max(first) * 1000:.0f} ms")
    print(f"  kept (second request): median {statistics.median(kept) * 1000:.1f} ms, worst {max(kept) * 1000:.1f} ms")
    print(f"  positions decided: {decided} of {positions} = {decided / max(1, positions):.1%}")


if __name__ == "__main__":
    run_checked(main)
