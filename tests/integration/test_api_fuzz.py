"""Schemathesis against the app in-process (ASGI): every operation, positive and negative data, all default checks,
seeded (derandomised) and bounded to fit CI.

Everything here goes through schemathesis's own ASGI client, which runs the app's lifespan once in its own event
loop; the app is not entered by the Litestar test client, so its Redis connections live in that one loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from litestar import Litestar
from schemathesis.generation import GenerationMode
from schemathesis.python.asgi import get_client

EXAMPLES = 40
OWN_PLAYER = frozenset({"rotatePlayerToken", "erasePlayer"})
"""Operations that end the shared player's token: each case is sent as a player of its own."""


def configure(schema: Any) -> Any:
    """Every check on, as schemathesis ships them, with one outcome added to what a schema-valid request may get:
    412, when its If-Match names a version the game is not at (the schema cannot know the game's version; the
    precondition is about the resource, as 404 and 409, which schemathesis already accepts). Content the schema
    cannot rule out (a layout repeating a card, a long code past 52!) is 409 by the service itself."""
    statuses = schema.config.checks.positive_data_acceptance.expected_statuses
    if "412" not in statuses:
        statuses.append("412")
    return schema


def can_be_invalid(operation: dict[str, Any]) -> bool:
    """Whether a request to ``operation`` can be made invalid: it has a body, or a parameter that constrains its
    value (a free-form header such as Accept-Language accepts any string)."""
    free_form = {"type": "string"}
    constrained = [p for p in operation.get("parameters", []) if p["in"] != "header" or p["schema"] != free_form]
    return bool(operation.get("requestBody") or constrained)


def _fuzz(operation: Any, mode: GenerationMode, auth: Callable[[], dict[str, str]], **fixed: Any) -> None:
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(operation.as_strategy(mode, **fixed))
    def run(case: Any) -> None:
        case.call_and_validate(headers=auth())

    run()


def _own_token(client: Any, operation: Any, auth: dict[str, str]) -> Callable[[], dict[str, str]]:
    """The headers each case is sent with: the shared player's, but a player of its own for a case that replaces
    its token (which would leave every later case a 401)."""
    if operation.definition.raw.get("operationId") not in OWN_PLAYER:
        return lambda: auth
    return lambda: {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.value)
def test_every_operation_against_the_schema(app: Litestar, mode: GenerationMode) -> None:
    schema = configure(schemathesis.openapi.from_asgi("/schema/openapi.json", app))
    with get_client(app) as client:  # type: ignore[arg-type]
        token = client.post("/v1/players", json={}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        failures = []
        for result in schema.get_all_operations():
            operation = result.ok()
            raw = operation.definition.raw
            if mode is GenerationMode.NEGATIVE and not can_be_invalid(raw):
                continue  # nothing in the request can be made invalid
            variants: list[dict[str, Any]] = [{}]
            if "{game_id}" in operation.path:
                game = client.post("/v1/games", json={"code": "PY1-SC-FUZZING"}, headers=auth).json()
                variants.append({"path_parameters": {"game_id": game["id"]}})
            for fixed in variants:
                try:
                    _fuzz(operation, mode, _own_token(client, operation, auth), **fixed)
                except Exception as error:
                    failures.append(f"{operation.label} {fixed}: {error}")
    assert not failures, "\n\n".join(failures)


def test_stateful_workflows_follow_the_links(app: Litestar) -> None:
    """Create a game, then play, tap, hint, read and abandon it through the schema's links."""
    schema = configure(schemathesis.openapi.from_asgi("/schema/openapi.json", app))
    with get_client(app) as client:  # type: ignore[arg-type]
        auth = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
    workflow: Any = schema.as_state_machine()

    class WithAuth(workflow):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            if case.operation.definition.raw.get("operationId") in OWN_PLAYER:
                return {}  # never the shared token: answered 401, which the schema documents
            return {"headers": auth}

    WithAuth.run(
        settings=settings(
            max_examples=25, stateful_step_count=6, deadline=None, database=None, derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )  # fmt: skip
