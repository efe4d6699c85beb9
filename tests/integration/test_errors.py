"""Every error is problem+json with a stable code, in Hungarian by default and in English on request."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from litestar import Request
from litestar.testing import TestClient

from pyramide.engine import DealCode
from pyramide.engine.messages import ALWAYS_SHOWN, render
from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from pyramide.service.http.body import MAX_BODY_BYTES
from pyramide.service.http.problems import MESSAGES, MOVE_NOT_EXPLAINED, problem_response, title
from pyramide.service.http.schemas import DEAL_CODE_PATTERN
from tests.support.layouts import EASY_CLEARING, dead_end_moves, dead_end_start, doc_layout, easy_game
from tests.support.players import new_player
from tests.support.schema_refs import resolved

Client = TestClient[Any]
LANGUAGES = [(None, "hu"), ("en", "en"), ("en-GB,en;q=0.9", "en"), ("de, hu;q=0.5", "hu"), ("hu;q=0.2, en;q=0.8", "en")]


def _check(response: Any, status: int, code: str, language: str = "hu", *, explained: bool = True) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.headers["content-language"] == language
    problem: dict[str, Any] = response.json()
    assert problem["code"] == code and problem["status"] == status
    assert problem["title"] == (title(code, language) if explained else render(MOVE_NOT_EXPLAINED, language, {}))
    assert problem["detail"]
    assert set(problem) <= {"type", "title", "status", "detail", "code", "errors"}
    for entry in problem.get("errors", []):
        assert entry["code"] and entry["message"] and {"pointer", "query", "header"} & set(entry), entry
    return problem


def _game(client: Client, player: dict[str, str]) -> str:
    body = {"layout": DealCode.for_layout(doc_layout()).to_json()}
    game_id: str = client.post("/v1/games", json=body, headers=player).json()["id"]
    return game_id


@pytest.mark.parametrize(("accept", "language"), LANGUAGES)
def test_language_negotiation(client: Client, accept: str | None, language: str) -> None:
    headers = {} if accept is None else {"Accept-Language": accept}
    problem = _check(client.get("/v1/players/me", headers=headers), 401, "unauthorized", language)
    assert (
        problem["title"]
        == {"hu": "Hiányzó vagy érvénytelen hozzáférési token", "en": "Missing or invalid access token"}[language]
    )


@pytest.mark.parametrize("language", ["hu", "en"])
def test_service_errors(client: Client, player: dict[str, str], language: str) -> None:
    lang = {"Accept-Language": language}
    auth = {**player, **lang}
    missing = client.get("/v1/games", headers=lang)
    _check(missing, 405, "method_not_allowed", language)
    assert "GET" not in missing.headers["allow"] and "POST" in missing.headers["allow"]
    unauthorized = client.get("/v1/players/me", headers={**lang, "Authorization": "Bearer nope"})
    _check(unauthorized, 401, "unauthorized", language)
    assert unauthorized.headers["www-authenticate"].startswith("Bearer")
    _check(client.get(f"/v1/games/{uuid.uuid4()}", headers=auth), 404, "game_not_found", language)
    _check(client.get("/v1/nothing-here", headers=lang), 404, "not_found", language)
    _check(client.post("/v1/games", content=b'{"code": ', headers=auth), 400, "bad_request", language)
    problem = _check(client.post("/v1/games", json={"code": 7}, headers=auth), 422, "validation_failed", language)
    assert "code" in problem["detail"]
    _check(
        client.post("/v1/games", json={"rules": {"recycles": False}}, headers=auth), 422, "validation_failed", language
    )
    _check(client.post("/v1/players", json={"explain_errors": 0}, headers=lang), 422, "validation_failed", language)
    game = _game(client, player)
    stale = client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers={**auth, "If-Match": '"5"'})
    assert "0" in _check(stale, 412, "precondition_failed", language)["detail"]
    key = {"Idempotency-Key": f"key-{language}"}
    client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers={**auth, **key})
    reused = client.post(f"/v1/games/{game}/moves", json={"type": "undo"}, headers={**auth, **key})
    _check(reused, 409, "idempotency_key_reused", language)


@pytest.mark.parametrize("language", ["hu", "en"])
def test_every_post_refuses_a_malformed_idempotency_key_and_documents_it(
    client: Client, player: dict[str, str], language: str
) -> None:
    """Each POST of the players' API reads the header itself; the schema must say so, and a bad key must change
    nothing. (The operator's and the apps' admin routes take none.)"""
    game = _game(client, player)
    document = resolved(client.get("/schema/openapi.json").json())
    apps = ("/v1/admin/", "/v1/apps/")
    players_api = {path: ops for path, ops in document["paths"].items() if not path.startswith(apps)}
    posts = {path: ops["post"] for path, ops in players_api.items() if "post" in ops}
    assert {op["operationId"] for op in posts.values()} == {
        "createPlayer",
        "createGame",
        "playMove",
        "tap",
        "abandonGame",
        "rotatePlayerToken",
    }
    bodies = {"createPlayer": {}, "createGame": {}, "playMove": {"type": "draw"}, "tap": {"target": "stock"}}
    for path, operation in posts.items():
        header = next(p for p in operation["parameters"] if p["name"] == "Idempotency-Key")
        assert header["in"] == "header" and not header["required"] and "400" in operation["responses"]
        url = path.replace("{game_id}", game)
        for bad in ("", "a b", "x" * 201):
            headers = {**player, "Accept-Language": language, "Idempotency-Key": bad}
            response = client.post(url, json=bodies.get(operation["operationId"], {}), headers=headers)
            _check(response, 400, "invalid_idempotency_key", language)
    after = client.get(f"/v1/games/{game}", headers=player).json()
    assert after["version"] == 0 and after["status"] == "in_progress", "refused requests change nothing"
    ok = client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers={**player, "Idempotency-Key": "x" * 200})
    assert ok.status_code == 200


@pytest.mark.parametrize("language", ["hu", "en"])
def test_too_long_bodies_are_413_and_documented(client: Client, player: dict[str, str], language: str) -> None:
    """Past the limit a body is refused whatever route takes it, and nothing changes."""
    game = _game(client, player)
    headers = {**player, "Accept-Language": language, "Content-Type": "application/json"}
    url = f"/v1/games/{game}/moves"
    assert client.post(url, json={"type": "draw"}, headers=headers).json()["version"] == 1
    too_long = b'{"type": "draw", "padding": "' + b"x" * MAX_BODY_BYTES + b'"}'
    problem = _check(client.post(url, content=too_long, headers=headers), 413, "body_too_large", language)
    assert str(MAX_BODY_BYTES) in problem["detail"]
    _check(client.post("/v1/players", content=too_long, headers=headers), 413, "body_too_large", language)
    assert client.get(f"/v1/games/{game}", headers=player).json()["version"] == 1, "refused bodies change nothing"
    document = resolved(client.get("/schema/openapi.json").json())
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation or method == "post":
                assert "413" in operation["responses"], (method, path)


ENGINE_CASES = [
    ({"type": "pair", "cards": ["QC", "AD"]}, "card_covered"),
    ({"type": "pair", "cards": ["7C", "7S"]}, "sum_must_be_13"),
    ({"type": "pair", "cards": ["7C", "7C"]}, "same_card"),
    ({"type": "king", "card": "JS"}, "not_a_king"),
    ({"type": "pair", "cards": ["6D", "7S"]}, "not_free"),
    ({"type": "recycle"}, "stock_not_empty"),
    ({"type": "undo"}, "nothing_to_undo"),
]


@pytest.mark.parametrize("explain", [True, False], ids=["explained", "unexplained"])
@pytest.mark.parametrize("language", ["hu", "en"])
@pytest.mark.parametrize(("move", "code"), ENGINE_CASES, ids=[c for _, c in ENGINE_CASES])
def test_illegal_moves_are_409_with_the_engines_code(
    client: Client, move: dict[str, Any], code: str, language: str, explain: bool
) -> None:
    """The code always says why; the message says it only with the game's error explanations on, or for the
    messages the rules document shows always (as a tap shows them)."""
    player = new_player(client, explain_errors=explain)
    game = _game(client, player)
    before = client.get(f"/v1/games/{game}", headers=player).json()
    response = client.post(f"/v1/games/{game}/moves", json=move, headers={**player, "Accept-Language": language})
    problem = _check(response, 409, code, language, explained=explain or code in ALWAYS_SHOWN)
    if code == "sum_must_be_13":
        assert (
            problem["title"] == {"hu": "Az összegnek ennyinek kell lennie: 13", "en": "The sum must be: 13"}[language]
        )
    after = client.get(f"/v1/games/{game}", headers=player).json()
    assert after == {**before, "elapsed_ms": after["elapsed_ms"]}, "a refused move changes nothing"


def test_removed_cards_and_finished_games(client: Client) -> None:
    player = new_player(client, explain_errors=True)
    game = _game(client, player)
    url = f"/v1/games/{game}/moves"
    client.post(url, json={"type": "king", "card": "KD"}, headers=player)
    _check(client.post(url, json={"type": "king", "card": "KD"}, headers=player), 409, "card_removed")
    _check(client.post(f"/v1/games/{game}/taps", json={"card": "KD"}, headers=player), 409, "card_removed")
    client.post(f"/v1/games/{game}/abandon", headers=player)
    _check(client.post(url, json={"type": "draw"}, headers=player), 409, "game_over")
    _check(client.post(f"/v1/games/{game}/abandon", headers=player), 409, "game_over")


def test_a_long_code_past_52_factorial_is_a_declared_409_on_every_route(live_url: str) -> None:
    """A long code that fits the schema's pattern but is past the last order of a deck (52!) names no possible deal:
    409 ``invalid_deal_code`` on every route that takes a code, each declaring 409 (it was undeclared on the deal
    and board routes: schemathesis ST103); not 422, which would refuse a schema-valid request."""
    too_big = "PY1-N-LAZ" + "Z" * 47
    assert re.fullmatch(DEAL_CODE_PATTERN, too_big), "the schema lets it through"
    client = httpx.Client(base_url=live_url, timeout=10)
    player = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
    for response in (
        client.post("/v1/games", json={"code": too_big}, headers=player),
        client.get(f"/v1/deals/{too_big}"),
        client.get(f"/v1/deals/{too_big}/analysis"),
        client.get(f"/v1/leaderboards/{too_big}"),
        client.get(f"/v1/leaderboards/PY1-N-LY{'Z' * 48}"),
    ):
        _check(response, 409, "invalid_deal_code")
    declared = resolved(client.get("/schema/openapi.json").json())["paths"]
    for path in ("/v1/deals/{code}", "/v1/deals/{code}/analysis", "/v1/leaderboards/{code}"):
        assert "409" in declared[path]["get"]["responses"], path


def test_codes_and_layouts_that_fit_the_schema_but_name_no_deal_are_409(client: Client, player: dict[str, str]) -> None:
    """The schema cannot say that a long code stays below 52! or that a layout holds each card once: such a request
    is well-formed, and refused as naming no possible deal (409), not as invalid (422)."""
    too_big = "PY1-N-LAZ" + "Z" * 47
    _check(client.post("/v1/games", json={"code": too_big}, headers=player), 409, "invalid_deal_code")
    _check(client.get(f"/v1/deals/{too_big}"), 409, "invalid_deal_code")
    layout = DealCode.for_layout(doc_layout()).to_json()
    layout["stock"][0] = layout["stock"][1]
    problem = _check(client.post("/v1/games", json={"layout": layout}, headers=player), 409, "invalid_layout")
    assert problem["title"] == "Érvénytelen kezdőállás"


@pytest.mark.parametrize("language", ["hu", "en"])
def test_a_malformed_deal_code_is_422_invalid_deal_code_on_every_route(
    client: Client, player: dict[str, str], language: str
) -> None:
    auth = {**player, "Accept-Language": language}
    for response in (
        client.get("/v1/deals/NOPE", headers=auth),
        client.get("/v1/deals/NOPE/analysis", headers=auth),
        client.get("/v1/leaderboards/NOPE", headers=auth),
        client.post("/v1/games", json={"code": "PY1-X-AAAAAAS"}, headers=auth),
    ):
        problem = _check(response, 422, "invalid_deal_code", language)
        assert "\\" not in problem["detail"] and "[" not in problem["detail"], "no regular expression"


def test_a_malformed_game_id_is_404_game_not_found(client: Client, player: dict[str, str]) -> None:
    for path in ("/v1/games/xyz", "/v1/games/xyz/moves", "/v1/games/12345678/record"):
        response = (
            client.get(path, headers=player) if "moves" not in path else client.post(path, json={}, headers=player)
        )
        _check(response, 404, "game_not_found")


def test_every_service_code_has_both_languages() -> None:
    for code, texts in MESSAGES.items():
        assert texts["hu"] and texts["en"] and texts["hu"] != texts["en"], code


@pytest.mark.parametrize("language", ["hu", "en"])
def test_turn_over_and_dead_end_codes(client: Client, language: str) -> None:
    auth = {**new_player(client, explain_errors=True), "Accept-Language": language}
    limited = client.post("/v1/games", json={"code": "PY1-0-NORECYC"}, headers=auth).json()
    url = f"/v1/games/{limited['id']}/moves"
    for _ in range(23):
        client.post(url, json={"type": "draw"}, headers=auth)
    _check(client.post(url, json={"type": "draw"}, headers=auth), 409, "stock_empty", language)
    _check(client.post(url, json={"type": "recycle"}, headers=auth), 409, "no_recycles_left", language)
    stuck = client.post("/v1/games", json={"layout": dead_end_start().code.to_json()}, headers=auth).json()
    url = f"/v1/games/{stuck['id']}/moves"
    for move in dead_end_moves():
        assert client.post(url, json=move_body(move), headers=auth).status_code == 200
    _check(client.post(url, json={"type": "recycle"}, headers=auth), 409, "waste_empty", language)
    strict = client.post("/v1/games", json={"layout": {**easy_game().code.to_json(), "rules": {"strict_win": True}}},
                         headers=auth).json()  # fmt: skip
    url = f"/v1/games/{strict['id']}/moves"
    for move in parse_record(EASY_CLEARING):
        client.post(url, json=move_body(move), headers=auth)
    _check(client.post(url, json={"type": "draw"}, headers=auth), 409, "no_more_moves", language)


@pytest.mark.parametrize("language", ["hu", "en"])
def test_every_code_renders_in_both_languages(client: Client, language: str) -> None:
    """Codes no test can provoke over HTTP (internal_error, invalid_state …) still have their words."""
    scope: Any = {"type": "http", "method": "GET", "path": "/", "query_string": b"", "app": client.app,
                  "headers": [(b"accept-language", language.encode())]}  # fmt: skip
    request: Request[Any, Any, Any] = Request(scope)
    for code in MESSAGES:
        response = problem_response(request, 409, code)
        assert response.headers["Content-Language"] == language
        words = response.content["title"]
        assert words == title(code, language) and "{" not in words
        assert not words.endswith((":", ";", ",")), words


def test_whole_numbers_are_integers_but_booleans_and_strings_are_not(client: Client, player: dict[str, str]) -> None:
    ok = client.post("/v1/games", json={"rules": {"recycles": 2.0}}, headers=player)
    assert ok.status_code == 201 and ok.json()["rules"]["recycles"] == 2
    for bad in (True, "2", 2.5):
        refused = client.post("/v1/games", json={"rules": {"recycles": bad}}, headers=player)
        _check(refused, 422, "validation_failed")
