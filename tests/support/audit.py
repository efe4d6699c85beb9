"""The audit tests' operator and their requests as a player or the operator, shared with the review decisions' tests."""

from __future__ import annotations

from typing import Any

OPERATOR_KEY = "audit-tests-operator-key-0123456789abcdef-xyz"


OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}


def _as(key: str, external_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Pyramide-Player": external_id}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _me(client: Any, headers: dict[str, str]) -> str:
    response = client.get("/v1/players/me", headers=headers)
    assert response.status_code == 200, response.text
    return str(response.json()["id"])
