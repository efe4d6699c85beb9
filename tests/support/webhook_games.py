"""Games started and abandoned in bulk, for the webhooks' limits and health tests."""

from __future__ import annotations

from typing import Any

from tests.support.deals import EASY_CODE, WINNING
from tests.support.webhooks import as_user


def _started_games(http: Any, key: str, players: int) -> list[tuple[dict[str, str], str]]:
    """One game each of ``players`` app players, one move played (nothing emitted yet)."""
    games = []
    for number in range(players):
        user = as_user(key, f"user-{number}")
        game = http.post("/v1/games", json={"code": EASY_CODE}, headers=user)
        assert game.status_code == 201, game.text
        assert http.post(f"/v1/games/{game.json()['id']}/moves", json=WINNING[0], headers=user).status_code == 200
        games.append((user, str(game.json()["id"])))
    return games


def _abandon(http: Any, games: list[tuple[dict[str, str], str]]) -> None:
    for user, game in games:
        assert http.post(f"/v1/games/{game}/abandon", headers=user).status_code == 200
