"""``HEAD`` wherever ``GET`` is, and the service's own pages under a strict Content-Security-Policy, over real HTTP
(uvicorn on a real Redis). Findings of the hardening review (issue 41): ``HEAD`` answered 405 on every route,
``/health/live`` included, and ``/schema`` sent no policy at all."""

from __future__ import annotations

import re

import httpx

VARYING = frozenset({"date", "x-request-id"})
"""Headers that differ between any two requests."""


def _player_and_game(api: str) -> tuple[dict[str, str], str]:
    token = httpx.post(f"{api}/v1/players", json={}).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    game = httpx.post(f"{api}/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    return auth, game


def test_head_answers_as_get_without_the_body(live_url: str) -> None:
    auth, game = _player_and_game(live_url)
    paths = [
        "/health/live", "/health/ready", f"/v1/games/{game}", "/v1/players/me", "/v1/rules", "/schema",
        "/schema/openapi.json", "/schema-assets/swagger-ui.css", "/play/", "/play/app.js", "/play",
    ]  # fmt: skip
    with httpx.Client(headers={**auth, "Accept-Language": "en"}) as client:
        for path in paths:
            got = client.get(f"{live_url}{path}")
            head = client.head(f"{live_url}{path}")
            assert got.status_code in (200, 308), (path, got.status_code)
            assert head.status_code == got.status_code, (path, head.status_code, head.text)
            assert head.content == b"", path
            same = {k: v for k, v in head.headers.items() if k not in VARYING}
            assert same == {k: v for k, v in got.headers.items() if k not in VARYING}, path
            assert int(head.headers["content-length"]) == len(got.content), path
        assert client.head(f"{live_url}/v1/games/{game}").headers["etag"] == '"0"'


def test_allow_lists_head_beside_get(live_url: str) -> None:
    assert httpx.options(f"{live_url}/health/live").headers["allow"] == "GET, HEAD, OPTIONS"
    assert httpx.options(f"{live_url}/v1/players/me").headers["allow"] == "DELETE, GET, HEAD, OPTIONS, PATCH"
    refused = httpx.post(f"{live_url}/health/live", headers={"Accept-Language": "en"})
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD, OPTIONS"
    assert refused.json()["code"] == "method_not_allowed" and refused.headers["content-language"] == "en"
    no_get = httpx.head(f"{live_url}/v1/players")  # POST alone: HEAD is refused as GET is, with no body
    assert no_get.status_code == 405 and no_get.content == b"" and no_get.headers["allow"] == "OPTIONS, POST"


def _policy(response: httpx.Response) -> dict[str, str]:
    directives = (d.strip().split(" ", 1) for d in response.headers["content-security-policy"].split(";"))
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives if d[0]}


def test_the_pages_allow_only_their_own_assets(live_url: str) -> None:
    for path in ("/schema", "/schema/swagger", "/play/", "/play"):
        page = httpx.get(f"{live_url}{path}")
        policy = _policy(page)
        assert policy["default-src"] == "'self'" and policy["object-src"] == "'none'", path
        assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'none'", path
        assert "unsafe" not in page.headers["content-security-policy"], path
        assert page.headers["x-content-type-options"] == "nosniff", path
    docs = httpx.get(f"{live_url}/schema").text
    assert re.findall(r"<script(?![^>]*\bsrc=)", docs) == [], "no inline script on the docs page"
    assert "<style" not in docs and "http" not in docs
    script = httpx.get(f"{live_url}/schema-assets/swagger-init.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert script.headers["x-content-type-options"] == "nosniff"
