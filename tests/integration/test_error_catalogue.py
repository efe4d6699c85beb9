"""The error catalogue (issue 44, item 9): every code a problem can carry is in ``Problem.code``'s enum, has a page
at its problem's ``type`` served by the service itself (title, status, when, what to do, in hu and en), and a line in
docs/api.md, all from one source; problems that really happen point to the page of their code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from pyramide.engine.codes import Code
from pyramide.service.app import create_app
from pyramide.service.errors import ErrorCode
from pyramide.service.http.problem_pages import docs_table
from pyramide.service.http.problems import HttpCode
from pyramide.service.infra.settings import Settings
from tests.support.serving import serve_in_thread

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
FEEDBACK = {Code.SELECTED, Code.DESELECTED, Code.REMOVED, Code.DRAWN, Code.RECYCLED, Code.UNDONE, Code.WON}
"""The engine's codes that are feedback on a tap, never a problem; ``invalid_state`` is sent as ``internal_error``."""
EVERY_CODE = {str(c) for c in (*Code, *ErrorCode, *HttpCode)} - {str(c) for c in FEEDBACK} - {Code.INVALID_STATE}


def _page(client: httpx.Client, path: str, language: str) -> dict[str, Any]:
    response = client.get(path, headers={"Accept-Language": language})
    assert response.status_code == 200, (path, response.text)
    assert response.headers["content-language"] == language
    page: dict[str, Any] = response.json()
    return page


def test_every_code_the_service_defines_has_its_page_enum_entry_and_docs_line(live_url: str) -> None:
    with httpx.Client(base_url=live_url, timeout=10) as client:
        enum = client.get("/schema/openapi.json").json()["components"]["schemas"]["Problem"]["properties"]["code"]
        assert set(enum["enum"]) == EVERY_CODE
        for code in sorted(EVERY_CODE):
            hu, en = (_page(client, f"/problems/{code}", language) for language in ("hu", "en"))
            for page in (hu, en):
                assert page["code"] == code and page["type"] == f"/problems/{code}"
                assert 400 <= page["status"] < 600 and page["title"] and page["when"] and page["what_to_do"]
            assert hu["status"] == en["status"] and hu["statuses"] == en["statuses"]
            assert en["status"] in en["statuses"] and en["statuses"] == sorted(set(en["statuses"]))
            assert hu["when"] != en["when"] and hu["what_to_do"] != en["what_to_do"], code
            statuses = ", ".join(map(str, en["statuses"]))
            assert f"| `{code}` | {statuses} | {en['title']} | `/problems/{code}` |" in docs_table()
        unknown = client.get("/problems/no_such_code")
        assert unknown.status_code == 404 and unknown.json()["code"] == "not_found"
    assert docs_table() in API_DOC.read_text(encoding="utf-8"), "docs/api.md's list of codes is docs_table()"


def test_problems_that_happen_point_to_the_page_of_their_code(live_url: str) -> None:
    """Real refusals over HTTP: each problem's ``type`` resolves, against the request's URI, to a page of its code
    with its status; its code is in the schema's enum."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        enum = set(
            client.get("/schema/openapi.json").json()["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
        )
        token = client.post("/v1/players", json={}).json()["token"]
        player = {"Authorization": f"Bearer {token}"}
        game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()["id"]
        refused = [
            client.get("/v1/nowhere"),
            client.delete("/v1/deals/PY1-N-AAAAAAS"),
            client.get("/v1/players/me"),
            client.patch("/v1/players/me", json={"locale": "xx"}, headers=player),
            client.get("/v1/deals/PY9-N-AAAAAAS"),
            client.post(f"/v1/games/{game}/moves", json={"type": "undo"}, headers=player),
            client.post("/v1/games", headers={**player, "Idempotency-Key": "a b"}),
            client.post(f"/v1/games/{game}/abandon", headers={**player, "If-Match": "nope"}),
        ]
        seen = set()
        for response in refused:
            problem = response.json()
            assert problem["code"] in enum
            page = _page(client, str(response.url.join(problem["type"]).path), "en")
            assert problem["status"] == response.status_code
            assert page["code"] == problem["code"] and problem["status"] in page["statuses"], problem
            seen.add(problem["code"])
    assert len(seen) >= 7, seen


def test_a_code_sent_with_two_statuses_names_both_on_its_page(live_url: str) -> None:
    """Found after the first work on issue 44: ``invalid_deal_code`` is 422 for a malformed code and 409 for a
    well-formed one past 52!, but its page named 422 alone. Both are played over HTTP; the page (hu and en) and
    docs/api.md's line name both."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        malformed = client.get("/v1/deals/PY1-N-!!")
        past_the_last = client.get(f"/v1/leaderboards/PY1-N-LY{'Z' * 48}")
        sent = {(r.json()["code"], r.status_code) for r in (malformed, past_the_last)}
        assert sent == {("invalid_deal_code", 422), ("invalid_deal_code", 409)}, sent
        for language in ("hu", "en"):
            page = _page(client, malformed.json()["type"], language)
            assert page["statuses"] == [409, 422] and page["status"] == 422, page
    assert "| `invalid_deal_code` | 409, 422 |" in API_DOC.read_text(encoding="utf-8")


def test_a_refused_cross_origin_preflight_is_a_declared_code_with_a_page(settings: Settings) -> None:
    """``cors_origin_not_allowed`` (403) is sent by a server that allows some origins, to a browser's preflight
    from another: a real request over a real socket, and its ``type`` is its page."""
    app = create_app(settings.but(http={"cors_origins": ("https://game.example",)}))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=10) as client:
        preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        problem = client.options("/v1/players", headers=preflight).json()
        assert (problem["code"], problem["status"]) == ("cors_origin_not_allowed", 403)
        page = _page(client, problem["type"], "hu")
        assert (page["code"], page["status"]) == ("cors_origin_not_allowed", 403)
