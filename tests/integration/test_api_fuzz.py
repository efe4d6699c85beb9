"""Schemathesis against the app in-process (ASGI): every operation, positive and negative data, all default checks,
seeded (derandomised) and bounded to fit CI.

Everything here goes through schemathesis's own ASGI client, which runs the app's lifespan once in its own event
loop; the app is not entered by the Litestar test client, so its Redis connections live in that one loop.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from litestar import Litestar
from schemathesis.generation import GenerationMode
from schemathesis.python.asgi import get_client

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.api_fuzz import ACTIONS, OWN_PLAYER, can_be_invalid, configure, run_workflows, stale

EXAMPLES = 40


@pytest.fixture
def app(settings: Settings) -> Litestar:
    """The app with live streams that end after a moment (``PYRAMIDE_STREAM_MAX_S``): a stream's answer is then a
    whole body the fuzzer reads and checks against the schema like any other."""
    return create_app(settings.but(streams={"max_s": 0.05}))


def _fuzz(operation: Any, mode: GenerationMode, headers: Callable[[Any], dict[str, str]], **fixed: Any) -> None:
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(operation.as_strategy(mode, **fixed))
    def run(case: Any) -> None:
        case.call_and_validate(headers=headers(case))

    run()


INVALID_TOKEN = {"Authorization": "Bearer pyr_no-such-token-0123456789abcdef"}
"""A bearer token of no player."""


def _credentials(client: Any, operation: Any, auth: dict[str, str]) -> dict[str, Callable[[Any], dict[str, str]]]:
    """How each case of ``operation`` is sent, by name: with the shared player's token, or a player of its own for
    a case that replaces its token (which would leave every later case a 401); an operation declared public or
    optional (``security`` holding ``{}``, or empty) also without a token and with an invalid one, whose answer
    must be declared as any other."""
    if operation.definition.raw.get("operationId") in OWN_PLAYER:
        return {"own": lambda _: {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}}
    ways: dict[str, Callable[[Any], dict[str, str]]] = {"token": lambda _: auth}
    security = operation.definition.raw.get("security")
    if security is not None and (security == [] or {} in security):
        ways |= {"no token": _without_token, "invalid token": lambda _: INVALID_TOKEN}
    return ways


def _without_token(case: Any) -> dict[str, str]:
    if case.headers:
        case.headers.pop("Authorization", None)
    return {}


Send = Callable[[Any], dict[str, str]]
"""The headers a case is sent with (the case may be changed: a header dropped or replaced)."""


def _on_current_version(client: Any, game: str, send: Send) -> Send:
    """``send``, with a generated If-Match that names no version the game is at replaced by its current ETag: a
    schema-valid request on the real version, as a client that read the game first sends it."""

    def headers(case: Any) -> dict[str, str]:
        sent = send(case)
        current = client.get(f"/v1/games/{game}", headers=sent).headers.get("etag")
        if current is not None and case.headers and stale(case.headers.get("If-Match"), current):
            case.headers["If-Match"] = current
        return sent

    return headers


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.value)
@pytest.mark.slow
def test_every_operation_against_the_schema(app: Litestar, mode: GenerationMode) -> None:
    schema = configure(schemathesis.openapi.from_asgi("/schema/openapi.json", app))
    with get_client(app) as client:  # type: ignore[arg-type]
        token = client.post("/v1/players", json={}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        failures = []
        for result in schema.get_all_operations():
            operation = result.ok()
            raw = operation.definition.raw
            if mode is GenerationMode.NEGATIVE and not can_be_invalid(raw, schema.raw_schema):
                continue  # nothing in the request can be made invalid
            variants: list[tuple[dict[str, Any], str | None]] = [({}, None)]
            if "{game_id}" in operation.path:
                game = client.post("/v1/games", json={"code": "PY1-SC-FUZZING"}, headers=auth).json()["id"]
                variants.append(({"path_parameters": {"game_id": game}}, game))
            for (fixed, game), (way, send) in product(variants, _credentials(client, operation, auth).items()):
                headers = (
                    send
                    if game is None or raw["operationId"] not in ACTIONS
                    else _on_current_version(client, game, send)
                )
                try:
                    _fuzz(operation, mode, headers, **fixed)
                except Exception as error:
                    failures.append(f"{operation.label} {fixed} {way}: {error}")
    assert not failures, "\n\n".join(failures)


def test_stateful_workflows_follow_the_links(app: Litestar) -> None:
    """Every operation as a workflow: create a game, then play, tap, hint, read and abandon it through the schema's
    links, the rest from random roots."""
    _run_workflows(app, configure(schemathesis.openapi.from_asgi("/schema/openapi.json", app)), 25)


def test_game_workflows_act_on_the_version_the_links_carry(app: Litestar) -> None:
    """The game operations alone, so that most steps follow a link from a game's snapshot: each action's If-Match
    is the ETag of the snapshot it follows (the links' ``header.If-Match``). With every check on and no allowance
    for 412, the actions that name the version a link carried are answered 200."""
    schema = configure(schemathesis.openapi.from_asgi("/schema/openapi.json", app)).include(path_regex="^/v1/games")
    acted = _run_workflows(app, schema, 80, as_app_user=False)
    carried = [status for _, status, tag in acted if tag == "linked"]
    assert 200 in carried and 412 not in carried, acted  # how many steps follow a link is hypothesis's draw


def _run_workflows(
    app: Litestar, schema: Any, examples: int, *, as_app_user: bool = True
) -> list[tuple[str, int, str | None]]:
    """:func:`run_workflows` in-process, as the shared player (no token for :data:`OWN_PLAYER`: answered 401, which
    the schema documents)."""
    with get_client(app) as client:  # type: ignore[arg-type]
        auth = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}

    def call_kwargs(case: Any) -> dict[str, Any]:
        return {} if case.operation.definition.raw.get("operationId") in OWN_PLAYER else {"headers": auth}

    return run_workflows(schema, examples, call_kwargs, as_app_user=as_app_user)
