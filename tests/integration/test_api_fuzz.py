"""Schemathesis against the app in-process (ASGI): every operation, positive and negative data, all default checks,
seeded (derandomised) and bounded to fit CI.

Everything here goes through schemathesis's own ASGI client, which runs the app's lifespan once in its own event
loop; the app is not entered by the Litestar test client, so its Redis connections live in that one loop.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from litestar import Litestar
from schemathesis.generation import GenerationMode
from schemathesis.python.asgi import get_client

from pyramide.engine import APP_RULES, DealCode, InvalidDealCodeError, Layout
from pyramide.engine.deal_codes import DEAL_COUNT

EXAMPLES = 40


def _valid_code(text: object) -> object:
    """A schema-valid deal code that names no deal (a long form past 52!) replaced by one that does."""
    if not isinstance(text, str):
        return text
    try:
        DealCode.parse(text)
    except InvalidDealCodeError:
        return "PY1-N-AAAAAAS"
    return text


def _valid_layout(layout: dict[str, Any]) -> dict[str, Any]:
    """The generated layout's shape kept, its cards replaced by a real deal: the schema cannot say that each of the
    52 cards appears exactly once across the rows, the waste and the stock."""
    number = int(hashlib.sha256(repr(layout).encode()).hexdigest(), 16) % DEAL_COUNT
    deal = DealCode(APP_RULES, number=number).deal()
    rest = deal.waste + deal.stock
    waste = min(len(layout.get("waste", [])), 24)
    real = Layout(deal.pyramid, rest[:waste], rest[waste:]).to_json()
    fixed = {**layout, **real}
    if "code" in layout:
        fixed["code"] = _valid_code(layout["code"])
    return fixed


def repair_positive_case(context: Any, case: Any) -> Any:
    """Positive cases stay positive for the rules a JSON schema cannot state (schemathesis's advice for
    'validation_mismatch': extend the generators to match the runtime rules). Negative cases are left alone."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return case
    if isinstance(case.body, dict):
        if isinstance(case.body.get("layout"), dict):
            case.body["layout"] = _valid_layout(case.body["layout"])
        if "code" in case.body:
            case.body["code"] = _valid_code(case.body["code"])
    if case.path_parameters and "code" in case.path_parameters:
        case.path_parameters["code"] = _valid_code(case.path_parameters["code"])
    return case


def _fuzz(operation: Any, mode: GenerationMode, auth: dict[str, str], **fixed: Any) -> None:
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(operation.as_strategy(mode, **fixed))
    def run(case: Any) -> None:
        case.call_and_validate(headers=auth)

    run()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.value)
def test_every_operation_against_the_schema(app: Litestar, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_asgi("/schema/openapi.json", app)
    schema.hooks.register_hook_with_name(repair_positive_case, "map_case")
    with get_client(app) as client:  # type: ignore[arg-type]
        token = client.post("/v1/players", json={}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        failures = []
        for result in schema.get_all_operations():
            operation = result.ok()  # type: ignore[union-attr]
            raw = operation.definition.raw
            if mode is GenerationMode.NEGATIVE and not raw.get("parameters") and not raw.get("requestBody"):
                continue  # nothing in the request can be made invalid
            variants: list[dict[str, Any]] = [{}]
            if "{game_id}" in operation.path:
                game = client.post("/v1/games", json={"code": "PY1-SC-FUZZING"}, headers=auth).json()
                variants.append({"path_parameters": {"game_id": game["id"]}})
            for fixed in variants:
                try:
                    _fuzz(operation, mode, auth, **fixed)
                except Exception as error:
                    failures.append(f"{operation.label} {fixed}: {error}")
    assert not failures, "\n\n".join(failures)


def test_stateful_workflows_follow_the_links(app: Litestar) -> None:
    """Create a game, then play, tap, hint, read and abandon it through the schema's links."""
    schema = schemathesis.openapi.from_asgi("/schema/openapi.json", app)
    schema.hooks.register_hook_with_name(repair_positive_case, "map_case")
    with get_client(app) as client:  # type: ignore[arg-type]
        auth = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
    workflow: Any = schema.as_state_machine()

    class WithAuth(workflow):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:  # noqa: ARG002 - the same for every call
            return {"headers": auth}

    WithAuth.run(
        settings=settings(
            max_examples=25, stateful_step_count=6, deadline=None, database=None, derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )  # fmt: skip
