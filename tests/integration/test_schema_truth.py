"""What the schema says is what the service does, as a third-party integrator reads it: every ``pattern`` compiles
in JavaScript (``new RegExp(p)``, no flags, as every JS validator does) and matches what the service matches, and
the problem details' optional members are declared as they are sent (issue 44, items 5 and 8)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from typing import Any

import httpx

from pyramide.service.accounts.name_chars import NAME_BASES, NAME_MARKS
from pyramide.service.accounts.schemas import NAME_PATTERN
from pyramide.service.app import create_app
from pyramide.service.http.openapi_schemas import reached_components
from pyramide.service.http.schemas import class_ranges
from pyramide.service.infra.settings import Settings
from tests.support.deals import EASY_CODE, WINNING
from tests.support.schema_refs import resolved
from tests.support.serving import serve_in_thread

UUID = "0f0e0d0c-0b0a-4908-8706-050403020100"
SAMPLES = [
    "", "a", "10H", "KD", "Q♠", "1x", "PY1-N-AAAAAAS", " py1 – n_aaaaaas ", f"PY1-N-LY{'Z' * 48}", '"7"',
    'W/"7", "8"', "*", "hu", "en", "EN", "2026-12-01-N", "123", "12-34", "N",
    f"000000000001:0000000001:{'0' * 15}:{UUID}",
    f"a:000000000001:0000000001:{'0' * 15}:{UUID}", f"1:{'0' * 15}:{UUID}", f"17:{UUID}", "x" * 40,
    "Éva", "Zoë", "李小龍", "😀 Joe", "𓀀", "\u0301a", "a\u0301", " ", "\u3164", "\u2800", "a\u200bb",
    "\u202ex", "x\U000e0100", "𝔘𝔫𝔦", "x\U0001d165", "\U0010fffd", "\ufffd", "\U0001f9d1\u200d\U0001f680",
    "\ud7ff", "\ue000x", "a\tb", "é😀ő",
]  # fmt: skip
"""Values for every pattern, matching some and not others: cards, deal codes, tags, cursors, names (astral
letters and symbols, marks, spaces, blank-looking and format characters)."""

NODE = """
const {patterns, samples} = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = {};
for (const p of patterns) {
  try { const r = new RegExp(p); out[p] = samples.map((s) => r.test(s)); }
  catch (e) { out[p] = String(e); }
}
process.stdout.write(JSON.stringify(out));
"""


def _patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return own.union(*(_patterns(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(v) for v in node))
    return set()


def _in_javascript(patterns: set[str], samples: list[str]) -> dict[str, Any]:
    """Each pattern compiled by Node's ``new RegExp(p)``: its answers on ``samples``, or the error it threw."""
    given = json.dumps({"patterns": sorted(patterns), "samples": samples}, ensure_ascii=True)
    done = subprocess.run(["node", "-e", NODE], input=given, capture_output=True, text=True, timeout=60, check=True)
    answers: dict[str, Any] = json.loads(done.stdout)
    return answers


def _player(live_url: str) -> dict[str, str]:
    """Headers that authenticate a new player, created over HTTP."""
    response = httpx.post(f"{live_url}/v1/players", json={}, timeout=10)
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def test_every_schema_pattern_is_a_javascript_regex_matching_what_the_service_matches(live_url: str) -> None:
    document = resolved(httpx.get(f"{live_url}/schema/openapi.json", timeout=10).json())
    name_schema = document["components"]["schemas"]["PlayerSettingsBody"]["properties"]["name"]
    name_pattern = next(iter(_patterns(name_schema)))
    patterns = _patterns(document)
    assert len(patterns) >= 10
    answers = _in_javascript(patterns, SAMPLES)
    thrown = {p[:60]: a for p, a in answers.items() if isinstance(a, str)}
    assert not thrown, f"new RegExp(p) throws: {thrown}"
    for pattern in patterns:
        python = [re.search(pattern, s) is not None for s in SAMPLES]
        assert answers[pattern] == python, pattern
    service = [re.fullmatch(NAME_PATTERN, s) is not None for s in SAMPLES]
    schema = answers[name_pattern]
    for name, by_service, by_schema in zip(SAMPLES, service, schema, strict=True):
        within_bmp = all(ord(c) <= 0xFFFF for c in name)
        assert by_service == by_schema if within_bmp else by_schema <= by_service, name
    assert sum(service) >= 10 and service.count(False) >= 10
    with httpx.Client(base_url=live_url, timeout=10, headers=_player(live_url)) as client:
        for name, accepted in zip(SAMPLES, service, strict=True):
            if len(name) <= 24:
                status = client.patch("/v1/players/me", json={"name": name}).status_code
                assert status == (200 if accepted else 422), (name, status)


def test_problems_send_what_the_schema_declares(live_url: str) -> None:
    """Optional members (``errors``, an entry's ``pointer``/``query``/``header``) are left out when they do not
    apply, so the schema declares them optional with no ``default: null`` (which generators type as always
    present) and no null; what is sent fits the declaration."""
    document = resolved(httpx.get(f"{live_url}/schema/openapi.json", timeout=10).json())
    schemas = document["components"]["schemas"]
    player = _player(live_url)
    with httpx.Client(base_url=live_url, timeout=10) as client:
        game = f"/v1/games/{uuid.uuid4()}"
        problems = [
            client.get("/v1/nowhere"),
            client.delete("/v1/deals/PY1-N-AAAAAAS"),
            client.get(game, headers=player),
            client.patch("/v1/players/me", json={"locale": "xx", "extra": 1}, headers=player),
            client.get("/v1/players/me/games?limit=0", headers=player),
            client.post("/v1/games", headers={**player, "Idempotency-Key": "a b"}),
            client.get("/v1/players/me"),
        ]
    for response in problems:
        _fits(response.json(), "Problem", schemas)
    bodies = [r.json() for r in problems]
    sent = {key for body in bodies for key in body} | {k for b in bodies for e in b.get("errors", []) for k in e}
    assert {"errors", "pointer", "query"} <= sent, "the optional members were seen both ways"


def _fits(value: dict[str, Any], model: str, schemas: dict[str, Any]) -> None:
    schema = schemas[model]
    assert set(schema["required"]) <= set(value), (model, value)
    assert set(value) <= set(schema["properties"]), (model, value)
    for name, field in schema["properties"].items():
        if name not in schema["required"]:
            assert "default" not in field, f"{model}.{name} is declared with a default it is never sent with"
            assert {"type": "null"} not in field.get("anyOf", []), f"{model}.{name} is never sent as null"
        if name in value and isinstance(value[name], list):
            for entry in value[name]:
                _fits(entry, field["items"]["$ref"].rsplit("/", 1)[1], schemas)


EVERY_CHARACTER = """
const {pattern, codes} = JSON.parse(require("fs").readFileSync(0, "utf8"));
const regex = new RegExp(pattern);
const shapes = [(c) => c, (c) => "a" + c, (c) => c + "a"];
const out = shapes.map((shape) => codes.filter((code) => regex.test(shape(String.fromCodePoint(code)))));
process.stdout.write(JSON.stringify(out));
"""


def _characters() -> list[int]:
    """Every BMP scalar value, and beyond it every character where a UTF-16 rewriting can go wrong: each end of
    an allowed range and its neighbours, and each end of a high surrogate's block of 1024."""
    ranges = [*class_ranges(NAME_BASES), *class_ranges(NAME_MARKS)]
    edges = {c + d for first, last in ranges for c in (first, last) for d in (-1, 0, 1)}
    blocks = {b + d for b in range(0x10000, 0x110000, 0x400) for d in (-1, 0, 0x3FF)}
    return sorted(c for c in {*range(0x10000), *edges, *blocks} if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF)


def test_the_schemas_name_pattern_takes_every_character_the_service_takes(live_url: str) -> None:
    """Alone, after a letter and before one, the schema's name pattern takes the same characters in Node (UTF-16,
    no flags) and in Python, and the same as the service's own pattern within the BMP; beyond it, none that the
    service refuses (every edge of the service's ranges there checked)."""
    document = resolved(httpx.get(f"{live_url}/schema/openapi.json", timeout=10).json())
    name_pattern = document["components"]["schemas"]["PlayerSettingsBody"]["properties"]["name"]["anyOf"][0]
    codes = _characters()
    given = json.dumps({"pattern": name_pattern["pattern"], "codes": codes})
    done = subprocess.run(["node", "-e", EVERY_CHARACTER], input=given, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-300:]
    service, schema = re.compile(NAME_PATTERN), re.compile(name_pattern["pattern"])
    for shape, taken in zip(("{}", "a{}", "{}a"), json.loads(done.stdout), strict=True):
        python = {c for c in codes if schema.fullmatch(shape.format(chr(c)))}
        assert set(taken) == python, (shape, sorted(set(taken) ^ python)[:10])
        by_service = {c for c in codes if service.fullmatch(shape.format(chr(c)))}
        assert {c for c in python if c <= 0xFFFF} == {c for c in by_service if c <= 0xFFFF}, shape
        assert python <= by_service and len(python) > 50_000


def test_every_operation_that_takes_if_match_declares_its_412(live_url: str) -> None:
    """A schema-valid If-Match naming another version than the game's is a 412 problem on each operation that takes
    If-Match (played for real on a game moved on to version 1), and each declares that 412 with the Problem body;
    no other operation takes If-Match."""
    with httpx.Client(base_url=live_url, headers={"Accept-Language": "en"}) as api:
        document = resolved(api.get("/schema/openapi.json").json())
        auth = {"Authorization": f"Bearer {api.post('/v1/players', json={}).json()['token']}"}
        game = api.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
        assert api.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=auth).status_code == 200
        bodies = {"playMove": {"type": "draw"}, "tap": {"target": "stock"}, "abandonGame": None}
        taking = {}
        for path, operations in document["paths"].items():
            for method, operation in operations.items():
                if any(p["name"] == "If-Match" for p in operation.get("parameters", [])):
                    taking[operation["operationId"]] = (method, path.replace("{game_id}", game), operation)
        assert set(taking) == set(bodies), taking.keys()
        for name, (method, path, operation) in taking.items():
            declared = operation["responses"]["412"]["content"]["application/problem+json"]["schema"]
            assert declared == {"$ref": "#/components/schemas/Problem"}, name
            stale = api.request(method, path, json=bodies[name], headers={**auth, "If-Match": '"0"'})
            assert stale.status_code == 412 and stale.json()["code"] == "precondition_failed", (name, stale.text)
            assert stale.headers["content-type"] == "application/problem+json"


OPERATOR_KEY = "schema-truth-test-operator-key-0123456789abcdef"


def _answers(base: str) -> list[tuple[str, str, int, Any]]:
    """Real successful answers over HTTP, as ``(method, path template, status, body)``: a player named and
    renamed, a game won move by move with its hint, record, lists, statistics, board, deal and analysis, a game
    abandoned, the rules and the daily challenge with an attempt, an export, a new token, and an operator's app,
    session, ban, audit log and reviews."""
    answers: list[tuple[str, str, int, Any]] = []
    operator = {"Authorization": f"Bearer {OPERATOR_KEY}"}

    def call(method: str, template: str, path: str, auth: dict[str, str] | None = None, **kwargs: Any) -> Any:
        response = api.request(method, path, headers=auth or {}, **kwargs)
        assert response.status_code < 300, (method, path, response.text)
        answers.append((method.lower(), template, response.status_code, response.json()))
        return response.json()

    with httpx.Client(base_url=base, timeout=30) as api:
        created = call("POST", "/v1/players", "/v1/players", json={"name": "Ada"})
        auth = {"Authorization": f"Bearer {created['token']}"}
        call("POST", "/v1/players", "/v1/players", json={})  # a player without a name
        call("PATCH", "/v1/players/me", "/v1/players/me", auth, json={"name": "Ada L"})
        call("GET", "/v1/players/me", "/v1/players/me", auth)
        game = call("POST", "/v1/games", "/v1/games", auth, json={"code": EASY_CODE})["id"]
        call("GET", "/v1/games/{game_id}/hint", f"/v1/games/{game}/hint", auth)
        for move in WINNING:
            call("POST", "/v1/games/{game_id}/moves", f"/v1/games/{game}/moves", auth, json=move)
        call("GET", "/v1/games/{game_id}", f"/v1/games/{game}", auth)
        call("GET", "/v1/games/{game_id}/record", f"/v1/games/{game}/record", auth)
        other = call("POST", "/v1/games", "/v1/games", auth, json={"rules": {"recycles": 2}})["id"]
        call("POST", "/v1/games/{game_id}/taps", f"/v1/games/{other}/taps", auth, json={"target": "stock"})
        call("POST", "/v1/games/{game_id}/abandon", f"/v1/games/{other}/abandon", auth)
        for path in ("/v1/players/me/games", "/v1/players/me/wins", "/v1/players/me/stats", "/v1/players/me/export"):
            call("GET", path, path, auth)
        call("GET", "/v1/leaderboards/{code}", f"/v1/leaderboards/{EASY_CODE}", auth)
        call("GET", "/v1/deals/{code}", f"/v1/deals/{EASY_CODE}")
        call("GET", "/v1/deals/{code}/analysis", f"/v1/deals/{EASY_CODE}/analysis", params={"shortest": "true"})
        call("GET", "/v1/rules", "/v1/rules")
        challenge = call("GET", "/v1/challenges/current", "/v1/challenges/current", auth)["id"]
        call("POST", "/v1/games", "/v1/games", auth, json={"challenge": challenge})
        call("GET", "/v1/challenges/{challenge_id}", f"/v1/challenges/{challenge}", auth)  # with the attempt
        call("GET", "/v1/challenges/{challenge_id}/leaderboard", f"/v1/challenges/{challenge}/leaderboard")
        call("GET", "/v1/challenges", "/v1/challenges")  # the calendar
        kiosk = {"name": "Kiosk", "scopes": ["players"]}
        key = call("POST", "/v1/admin/apps", "/v1/admin/apps", operator, json=kiosk)["key"]
        call("GET", "/v1/admin/apps", "/v1/admin/apps", operator)
        session = "/v1/apps/me/players/{external_id}/sessions"
        call("POST", session, session.format(external_id="u1"), {"Authorization": f"Bearer {key}"})
        for action in ("ban", "unban"):
            template = f"/v1/admin/players/{{player_id}}/{action}"
            call("POST", template, template.format(player_id=created["id"]), operator, json={"reason": "test"})
        call("GET", "/v1/admin/audit", "/v1/admin/audit", operator)
        call("GET", "/v1/admin/reviews", "/v1/admin/reviews", operator)
        call("POST", "/v1/players/me/token", "/v1/players/me/token", auth)
        call("GET", "/health/ready", "/health/ready")
    return answers


def _observe(value: Any, schema: dict[str, Any], schemas: dict[str, Any], seen: dict[str, list[set[str]]]) -> None:
    """Record under each component's name the keys of every object in ``value`` that ``schema`` declares as that
    component (through ``$ref``, properties, items, and the branches an object fits by its keys)."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rpartition("/")[2]
        if isinstance(value, dict) and "properties" in schemas[name]:
            seen.setdefault(name, []).append(set(value))
        _observe(value, schemas[name], schemas, seen)
        return
    for branch in [*schema.get("anyOf", []), *schema.get("oneOf", [])]:
        target = schemas[branch["$ref"].rpartition("/")[2]] if "$ref" in branch else branch
        if not isinstance(value, dict) or set(value) <= set(target.get("properties", ())):
            _observe(value, branch, schemas, seen)
    if isinstance(value, dict):
        for key, item in value.items():
            if key in schema.get("properties", {}):
                _observe(item, schema["properties"][key], schemas, seen)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _observe(item, schema["items"], schemas, seen)


def test_responses_require_every_key_they_always_send(settings: Settings) -> None:
    """Each object a successful response sends, in real answers played over HTTP (every 2xx body but a few the
    examples cover) and in the schema's examples (answers the service gave): every key it always carries is
    ``required`` (else generators type it as maybe absent: the rules of a snapshot were), and every ``required``
    key is in each one. The request bodies keep their keys with a default optional (``createPlayer`` with ``{}``
    and partial ``rules``: the generated TypeScript clients' test compiles and plays them)."""
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}))
    with serve_in_thread(app) as base:
        document = resolved(httpx.get(f"{base}/schema/openapi.json", timeout=10).json())
        answers = _answers(base)
    schemas = document["components"]["schemas"]
    seen: dict[str, list[set[str]]] = {}
    for method, template, status, body in answers:
        declared = document["paths"][template][method]["responses"][str(status)]
        _observe(body, declared["content"]["application/json"]["schema"], schemas, seen)
    responses = [
        response["content"]["application/json"]["schema"]
        for operations in document["paths"].values()
        for operation in operations.values()
        for status, response in operation["responses"].items()
        if status.startswith("2") and "application/json" in response.get("content", {})
    ]
    sent = {name for name in reached_components(responses, schemas) if "properties" in schemas[name]}
    for name in sorted(sent):
        for example in schemas[name].get("examples", []):
            _observe(example, {"$ref": f"#/components/schemas/{name}"}, schemas, seen)
    assert sent <= set(seen), f"never seen in an answer: {sorted(sent - set(seen))}"
    untrue = []
    for name in sorted(sent):
        required = set(schemas[name].get("required", []))
        always = set.intersection(*seen[name])
        if not_required := always - required:
            untrue.append(f"{name} always sends {sorted(not_required)} but does not require them")
        if left_out := required - always:
            untrue.append(f"{name} requires {sorted(left_out)} but left them out")
    assert not untrue, untrue
    assert set(schemas["RuleSet"]["required"]) == set(schemas["RuleSet"]["properties"])
    assert not schemas["RulesBody"].get("required")
