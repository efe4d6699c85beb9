"""The contract as a browser front end meets it: CORS, every header in the schema, OPTIONS, optional bodies, the
player's language, errors in plain words, whole-sentence titles, and the API docs page with no network."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.http.cors import ALLOWED_HEADERS, EXPOSED_HEADERS
from pyramide.service.infra.settings import Settings
from tests.support.players import new_player
from tests.support.schema_refs import resolved

Client = TestClient[Any]
ORIGIN = "https://app.example"
GAME = "/v1/games/{id}"


@pytest.fixture
def cors_client(settings: Settings) -> Any:
    with TestClient(create_app(settings.but(http={"cors_origins": (ORIGIN,)}))) as client:
        yield client


def _preflight(client: Client, path: str, method: str, origin: str = ORIGIN) -> Any:
    headers = ", ".join(h.lower() for h in ALLOWED_HEADERS)
    return client.options(
        path,
        headers={"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers},
    )


def test_a_configured_origin_gets_its_preflights_answered_and_the_headers_it_needs(cors_client: Client) -> None:
    player = new_player(cors_client)
    game = cors_client.post("/v1/games", json={}, headers=player).json()["id"]
    for path, method in ((f"/v1/games/{game}/moves", "POST"), ("/v1/players/me", "PATCH"), ("/v1/games", "POST")):
        answer = _preflight(cors_client, path, method)
        assert answer.status_code in (200, 204)
        assert answer.headers["access-control-allow-origin"] == ORIGIN
        assert method in answer.headers["access-control-allow-methods"]
        allowed = {h.strip().lower() for h in answer.headers["access-control-allow-headers"].split(",")}
        assert {h.lower() for h in ALLOWED_HEADERS} <= allowed
    moved = cors_client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers={**player, "Origin": ORIGIN})
    assert moved.headers["access-control-allow-origin"] == ORIGIN
    exposed = {h.strip().lower() for h in moved.headers["access-control-expose-headers"].split(",")}
    assert {"etag", "location", "retry-after", "content-language", "ratelimit-policy", "ratelimit"} <= exposed
    assert "x-request-id" in exposed and {h.lower() for h in EXPOSED_HEADERS} == exposed


def test_other_origins_and_unconfigured_services_get_no_cors_headers(cors_client: Client, client: Client) -> None:
    assert (
        "access-control-allow-origin"
        not in _preflight(cors_client, "/v1/games", "POST", "https://evil.example").headers
    )
    created = cors_client.post("/v1/players", json={}, headers={"Origin": "https://evil.example"})
    assert created.status_code == 201 and "access-control-allow-origin" not in created.headers
    plain = client.post("/v1/players", json={}, headers={"Origin": ORIGIN})
    assert not [h for h in plain.headers if h.startswith("access-control-")], "CORS is off unless configured"


def test_options_allows_every_method_of_its_path(client: Client) -> None:
    document = resolved(client.get("/schema/openapi.json").json())
    for path, operations in document["paths"].items():
        concrete = path.replace("{game_id}", "00000000-0000-4000-8000-000000000000").replace("{code}", "PY1-N-AAAAAAS")
        answer = client.options(concrete)
        assert answer.status_code == 204, path
        allowed = {m.strip() for m in answer.headers["allow"].split(",")}
        methods = {m.upper() for m in operations}
        head = {"HEAD"} if "GET" in methods else set()  # answered wherever GET is; not in the document (issue 44)
        assert allowed == methods | head | {"OPTIONS"}, path


def test_the_schema_states_every_header_a_route_reads_or_sets(client: Client) -> None:
    operations = {
        op["operationId"]: op
        for path in resolved(client.get("/schema/openapi.json").json())["paths"].values()
        for op in path.values()
    }
    for name, operation in operations.items():
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert {"Accept-Language", "X-Request-ID"} <= headers, name
        if name in ("playMove", "tap", "abandonGame"):
            assert "If-Match" in headers
        for status, response in operation["responses"].items():
            declared = set(response["headers"])
            assert "X-Request-ID" in declared
            if int(status) >= 400:
                assert "Content-Language" in declared
            if status == "429":
                assert {"Retry-After", "RateLimit-Policy", "RateLimit"} <= declared
    for name in ("createGame", "getGame", "playMove", "tap", "abandonGame"):
        assert "ETag" in operations[name]["responses"]["201" if name == "createGame" else "200"]["headers"]
    for name in ("createGame", "createPlayer"):
        assert "Location" in operations[name]["responses"]["201"]["headers"]
    revalidated = (
        "getGame",
        "getGameRecord",
        "getGamePosition",
        "getDeal",
        "getLeaderboard",
        "getChallengeLeaderboard",
    )
    for name, operation in operations.items():
        headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
        assert ("If-None-Match" in headers) == (name in revalidated), name
        assert ("304" in operation["responses"]) == (name in revalidated), name
    for name in revalidated:
        not_modified = operations[name]["responses"]["304"]
        assert "content" not in not_modified and "ETag" in not_modified["headers"], name
        assert "ETag" in operations[name]["responses"]["200"]["headers"], name


def test_a_request_without_a_body_is_taken_as_empty_where_the_schema_says_it_is_optional(client: Client) -> None:
    operations = {
        op["operationId"]: op
        for path in resolved(client.get("/schema/openapi.json").json())["paths"].values()
        for op in path.values()
    }
    optional = {"updateCurrentPlayer", "createPlayer", "createGame", "banPlayer", "unbanPlayer"}
    assert optional | {"acceptReview", "rejectReview", "rotateAppKey"} == {
        n for n, op in operations.items() if "requestBody" in op and not op["requestBody"]["required"]
    }  # fmt: skip
    assert operations["playMove"]["requestBody"]["required"] and operations["tap"]["requestBody"]["required"]
    created = client.post("/v1/players")
    assert created.status_code == 201
    auth = {"Authorization": f"Bearer {created.json()['token']}"}
    assert client.post("/v1/games", headers=auth).status_code == 201
    assert client.patch("/v1/players/me", headers=auth).status_code == 200


def test_a_player_s_language_holds_where_the_request_names_none(client: Client) -> None:
    english = new_player(client, locale="en")
    missing = client.get("/v1/games/00000000-0000-4000-8000-000000000000", headers=english)
    assert missing.status_code == 404 and missing.headers["content-language"] == "en"
    assert missing.json()["title"] == "No such game"
    game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=english).json()["id"]
    refused = client.post(f"/v1/games/{game}/moves", json={"type": "recycle"}, headers=english)
    assert refused.status_code == 409 and refused.headers["content-language"] == "en"
    rules = client.get("/v1/rules", headers=english)
    assert rules.headers["content-language"] == "en" and rules.json()["presets"][0]["name"] == "The app's rules"
    assert client.get("/v1/rules").headers["content-language"] == "hu"
    hungarian = client.get("/v1/rules", headers={**english, "Accept-Language": "hu"})
    assert hungarian.headers["content-language"] == "hu", "Accept-Language first"


@pytest.mark.parametrize("language", ["hu", "en"])
def test_mistakes_are_said_in_plain_words_with_where_they_are(client: Client, language: str) -> None:
    auth = {**new_player(client), "Accept-Language": language}
    game = client.post("/v1/games", json={}, headers=auth).json()["id"]
    cases = [
        (client.post("/v1/games", json={"code": "PY1-X-AAAAAAS"}, headers=auth), "/code"),
        (client.post(f"/v1/games/{game}/taps", json={"card": "ZZ"}, headers=auth), "/card"),
        (client.post("/v1/games", json={"layout": {"pyramid": [["AS"]], "waste": [], "stock": []}}, headers=auth),
         "/layout/pyramid/1"),
        (client.post(f"/v1/games/{game}/moves", json={"type": "pair", "cards": ["AS", "XX"]}, headers=auth),
         "/cards/1"),
    ]  # fmt: skip
    for response, pointer in cases:
        problem = response.json()
        assert response.status_code == 422 and response.headers["content-language"] == language
        assert pointer in [e["pointer"] for e in problem["errors"]], problem
        text = problem["detail"] + " ".join(e["message"] for e in problem["errors"])
        assert not re.search(r"\^|\$|\\\\s|\[A-Z|Body\b|Tap\b|Field required|Input should", text), text
        if language == "hu":
            assert not re.search(r"\b(the|should|must|field)\b", text, re.IGNORECASE), text


@pytest.mark.parametrize("language", ["hu", "en"])
def test_titles_are_whole_sentences_and_details_carry_the_values(client: Client, language: str) -> None:
    auth = {**new_player(client), "Accept-Language": language}
    game = client.post("/v1/games", json={}, headers=auth).json()["id"]
    stale = client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers={**auth, "If-Match": '"99"'})
    big = client.post("/v1/games", content=b"{" + b" " * 70_000 + b"}", headers=auth)
    expected = {
        "hu": ("A játszma közben megváltozott", "A kérés törzse túl hosszú"),
        "en": ("The game has changed meanwhile", "The request body is too long"),
    }[language]
    assert (stale.status_code, big.status_code) == (412, 413)
    assert (stale.json()["title"], big.json()["title"]) == expected
    assert stale.json()["detail"].endswith(" 0") and big.json()["detail"].endswith(" 65536")


def test_the_api_docs_page_loads_everything_from_the_service(app: Litestar) -> None:
    with TestClient(app) as client:
        page = client.get("/schema")
        assert page.status_code == 200
        sources = re.findall(r"""(?:src|href)\s*=\s*['"]([^'"]+)['"]""", page.text)
        assert len(sources) >= 4 and all(s.startswith("/") and not s.startswith("//") for s in sources), sources
        for source in sources:
            asset = client.get(source)
            assert asset.status_code == 200 and asset.content, source
        script = client.get("/schema-assets/swagger-init.js").text
        assert 'url: "/schema/openapi.json"' in script, "the page shows the service's own document"
        assert "If-Match" in client.get("/schema/openapi.json").text
