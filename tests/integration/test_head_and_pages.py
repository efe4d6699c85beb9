"""``HEAD`` wherever ``GET`` is, and the service's own pages under a strict Content-Security-Policy, over real HTTP
(uvicorn on a real Redis). Findings of the hardening review (issue 41): ``HEAD`` answered 405 on every route,
``/health/live`` included, and ``/schema`` sent no policy at all."""

from __future__ import annotations

import re
from typing import Any, Final

import httpx
from litestar import Litestar

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.deals import EASY_CODE, WINNING
from tests.support.par import _until_decided
from tests.support.serving import serve_in_thread

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
            sent = len(got.content) if "content-encoding" not in got.headers else int(got.headers["content-length"])
            assert int(head.headers["content-length"]) == sent, path  # the schema is sent gzipped to httpx
        assert client.head(f"{live_url}/v1/games/{game}").headers["etag"] == '"0"'


OPERATOR_KEY = "operator-key-for-the-head-walk-0123456789"
COMPARED = ("content-type", "etag", "cache-control", "content-language", "vary", "location", "allow")
"""The headers a cache or a client reads from a HEAD as from its GET."""


def _path_values(api: httpx.Client, auth: dict[str, str]) -> dict[str, str]:
    """A real value for each path parameter of the schema: a created game, a deal code, today's challenge, an app, a
    player, a board. Both deals' pars are worked out first: a par that lands between a GET and its HEAD changes the
    deal, the game and the statistics (``best_over_par`` null becomes 0), as seen once in CI."""
    game = api.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    won = api.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()["id"]
    for move in WINNING:
        assert api.post(f"/v1/games/{won}/moves", json=move, headers=auth).status_code == 200
    challenge = api.get("/v1/challenges/current").json()["id"]
    operator = {"Authorization": f"Bearer {OPERATOR_KEY}"}
    app = api.post("/v1/admin/apps", json={"name": "head walk", "scopes": ["players"]}, headers=operator).json()
    me = api.get("/v1/players/me", headers=auth).json()["id"]
    for code in ("PY1-N-AAAAAAS", EASY_CODE):  # a par landing between a GET and its HEAD changes what both say
        _until_decided(api, code)
    webhook = api.post("/v1/apps/me/webhooks", json={"url": "http://127.0.0.1:9/", "events": ["game.won"]},
                       headers={"Authorization": f"Bearer {app['key']}"}).json()["id"]  # fmt: skip
    return {
        "game_id": game, "code": "PY1-N-AAAAAAS", "challenge_id": challenge, "app_id": app["id"], "player_id": me,
        "board": "PY1-N-AAAAAAS", "review_id": "00000000-0000-4000-8000-000000000000", "external_id": "someone",
        "step": "0", "won_game_id": won, "webhook_id": webhook, "app_key": app["key"],
    }  # fmt: skip


MEASURED = ("/hint", "/analysis")
"""The paths whose body carries a time measured on each request (the solver's ``elapsed_ms``), so that the length of
the HEAD's own body, computed anew, may differ by a digit from the GET's."""


def _walk_gets(api: httpx.Client, document: dict[str, Any], values: dict[str, str]) -> list[str]:
    """Every GET operation of ``document``: its path with real values."""
    return [_filled(path, values) for path, operations in document["paths"].items() if "get" in operations]


def _filled(path: str, values: dict[str, str]) -> str:
    names = WON.get(path, {})
    return re.sub(r"\{(\w+)\}", lambda m: values[names.get(m.group(1), m.group(1))], path)


WON: Final = {
    "/v1/games/{game_id}/certificate": {"game_id": "won_game_id"},
    "/v1/games/{game_id}/review": {"game_id": "won_game_id"},
}
"""The paths that answer 200 only for a won (or a finished) game: they are walked with one."""


def test_head_of_every_get_in_the_schema_answers_as_the_get(settings: Settings) -> None:
    """Issue 44, "HEAD everywhere GET is": every GET operation the schema lists (with a real game, deal code,
    challenge, app and player; as a player and as the operator) answers HEAD with the GET's status and headers,
    ``Content-Length`` the length of the GET's body (or absent with it), and no body. Live streams end after a
    fifth of a second here, so that their GET has a whole body to compare."""
    update: dict[str, Any] = {
        "secrets": {"operator_key": OPERATOR_KEY},
        "webhooks": {"allow_loopback": True},
        "streams": {"max_s": 0.2},
    }
    app: Litestar = create_app(settings.but(**update))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=10) as api:
        token = api.post("/v1/players", json={}).json()["token"]
        player = {"Authorization": f"Bearer {token}", "Accept-Language": "en"}
        document = api.get("/schema/openapi.json").json()
        values = _path_values(api, player)
        paths = _walk_gets(api, document, values)
        assert len(paths) == sum("get" in ops for ops in document["paths"].values()) >= 20
        for path in paths:
            auth = {**player, "Authorization": f"Bearer {OPERATOR_KEY}"} if "/admin/" in path else player
            mine = "/apps/me/" in path or path == "/v1/apps/me"
            auth = {**player, "Authorization": f"Bearer {values['app_key']}"} if mine else auth
            got = api.get(path, headers=auth)
            head = api.head(path, headers=auth)
            assert got.status_code == 200, (path, got.status_code, got.text)
            assert head.status_code == got.status_code, (path, got.status_code, head.text)
            assert head.content == b"", path
            for name in COMPARED:
                assert head.headers.get(name) == got.headers.get(name), (path, name, head.headers, got.headers)
            length = head.headers.get("content-length")
            if not path.endswith(MEASURED):  # the solver's elapsed_ms is the time this run took: its digits vary
                assert length is None or int(length) == len(got.content), (path, length, len(got.content))
            else:
                assert length is None or abs(int(length) - len(got.content)) <= 8, (path, length, len(got.content))
            assert length is not None or "content-length" not in got.headers, path
            if "etag" in got.headers:  # revalidated as the GET is: the same status (304 or 200) with no body
                held = {**auth, "If-None-Match": got.headers["etag"]}
                again, head = api.get(path, headers=held), api.head(path, headers=held)
                assert (head.status_code, head.content) == (again.status_code, b""), path
                assert head.headers.get("etag") == again.headers.get("etag"), path


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
