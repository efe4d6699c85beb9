"""A 412 names the version to act on next (issue 59): it carried no ``ETag``, so a client had to read the game again
before it could send a fresh If-Match."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.support.schema_refs import resolved

DRAW = {"type": "draw"}


def test_a_refused_if_match_answers_the_current_etag(client: TestClient[Any], player: dict[str, str]) -> None:
    game = client.post("/v1/games", json={"code": "PY1-N-PRECOND"}, headers=player)
    url = f"/v1/games/{game.json()['id']}/moves"
    first_etag = game.headers["ETag"]
    moved = client.post(url, json=DRAW, headers={**player, "If-Match": first_etag})
    assert moved.status_code == 200, moved.text
    stale = client.post(url, json=DRAW, headers={**player, "If-Match": first_etag})
    assert stale.status_code == 412, stale.text
    assert stale.headers["ETag"] == moved.headers["ETag"]
    again = client.post(url, json=DRAW, headers={**player, "If-Match": stale.headers["ETag"]})
    assert again.status_code == 200, again.text  # the 412's ETag is enough to go on
    declared = resolved(client.get("/schema/openapi.json").json())["paths"]["/v1/games/{game_id}/moves"]["post"]
    assert "ETag" in declared["responses"]["412"]["headers"]
