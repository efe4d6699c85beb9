"""Players created through the API."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient


def new_player(client: TestClient[Any], **settings: object) -> dict[str, str]:
    """Headers that authenticate a fresh player."""
    response = client.post("/v1/players", json=settings)
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}
