"""The document's security says what each route does with a token: the ones that need one name the scheme, the
public ones that use one when sent list the scheme beside the empty requirement."""

from __future__ import annotations

import httpx

BEARER: dict[str, list[str]] = {"bearerAuth": []}


def test_the_token_routes_declare_their_security(live_url: str) -> None:
    with httpx.Client(base_url=live_url) as http:
        paths = http.get("/schema/openapi.json").json()["paths"]
        player = http.post("/v1/players", json={}, headers={"Idempotency-Key": "k" * 32})
        token = {"Authorization": f"Bearer {player.json()['token']}"}
        assert paths["/v1/players/me/token"]["post"]["security"] == [BEARER]
        assert paths["/v1/players/me"]["delete"]["security"] == [BEARER]
        for route in ("/v1/players/me/token", "/v1/players/me"):  # and they do need it
            method = "POST" if route.endswith("token") else "DELETE"
            assert http.request(method, route).status_code == 401
        assert paths["/v1/challenges/current"]["get"]["security"] == [{}, BEARER]
        assert paths["/v1/rules"]["get"]["security"] == [{}, BEARER]
        for route in ("/v1/challenges/current", "/v1/rules"):  # answered without one, and with one
            assert http.get(route).status_code in (200, 503)
            assert http.get(route, headers=token).status_code in (200, 503)
        assert paths["/v1/players"]["post"]["security"] == []
