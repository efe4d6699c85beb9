"""Schemathesis against the app in-process (ASGI): every operation, positive and negative data, all default checks,
seeded (derandomised) and bounded to fit CI.

Everything here goes through schemathesis's own ASGI client, which runs the app's lifespan once in its own event
loop; the app is not entered by the Litestar test client, so its Redis connections live in that one loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from itertools import product
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import FlakyStrategyDefinition
from litestar import Litestar
from schemathesis.generation import GenerationMode
from schemathesis.python.asgi import get_client

from pyramide.service.app import create_app
from pyramide.service.http.headers import parse_if_match
from pyramide.service.http.problems import ProblemError
from pyramide.service.infra.settings import Settings

EXAMPLES = 40
OWN_PLAYER = frozenset({"rotatePlayerToken", "erasePlayer"})
"""Operations that end the shared player's token: each case is sent as a player of its own."""
ACTIONS = frozenset({"playMove", "tap", "abandonGame"})
"""The operations that act on a game's version (If-Match)."""
SNAPSHOTS = ACTIONS | {"createGame", "getGame"}
"""The operations that answer a game's snapshot, its version as the ETag."""


@pytest.fixture
def app(settings: Settings) -> Litestar:
    """The app with live streams that end after a moment (``PYRAMIDE_STREAM_MAX_S``): a stream's answer is then a
    whole body the fuzzer reads and checks against the schema like any other."""
    return create_app(settings.but(streams={"max_s": 0.05}))


def configure(schema: Any) -> Any:
    """Every check on, as schemathesis ships them, with nothing added to what a schema-valid request may get: a
    412 (If-Match naming a version the game is not at) counts as rejected valid data, so the requests name the
    game's current version (the links carry its ETag)."""
    return schema


def can_be_invalid(operation: dict[str, Any]) -> bool:
    """Whether a request to ``operation`` can be made invalid: it has a body, or a parameter that constrains its
    value (a free-form header such as Accept-Language accepts any string)."""
    free_form = {"type": "string"}
    constrained = [p for p in operation.get("parameters", []) if p["in"] != "header" or p["schema"] != free_form]
    return bool(operation.get("requestBody") or constrained)


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


def stale(tag: str | None, current: str) -> bool:
    """Whether If-Match ``tag`` is well-formed and matches no version the game is at (``current``, its ETag): the
    request would be 412."""
    if tag is None:
        return False
    try:
        versions = parse_if_match(tag)
    except ProblemError:
        return False  # malformed: 400, not a matter of the version
    return versions is not None and int(current.strip('"')) not in versions


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


def run_workflows(
    schema: Any,
    examples: int,
    call_kwargs: Callable[[Any], dict[str, Any]],
    *,
    steps: int = 6,
    as_app_user: bool = True,
) -> list[tuple[str, int, str | None]]:
    """Run ``schema``'s state machine, each step sent with ``call_kwargs(case)``, every check on; returns each game
    action's operation, status and where its If-Match came from (``linked``: the ETag a link carried, the game's
    current one; ``refreshed``: see below; ``None``: none sent; else as generated).

    A step may follow a link from an older snapshot of a game that has moved on since (hypothesis draws any earlier
    response), or carry a generated If-Match: one that names no version the game is at is rightly 412. Such a step
    is sent with the game's current ETag instead (``refreshed``), as a client that read the game again would, so
    every action plays on the real version. Without ``as_app_user``, no step sends ``Pyramide-Player`` (an app's
    header: with a player's token every such step is 403 and leaves the game where it was)."""
    workflow: Any = schema.as_state_machine()
    acted: list[tuple[str, int, str | None]] = []
    failures: list[str] = []
    current: dict[str, str] = {}
    """Each game's ETag, as the newest snapshot of it showed (a replay of an idempotent request shows an older)."""

    class OnCurrentVersions(workflow):  # type: ignore[misc]
        origin: str | None = None

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return call_kwargs(case)

        def before_call(self, case: Any) -> None:
            super().before_call(case)
            headers = case.headers or {}
            if not as_app_user:
                headers.pop("Pyramide-Player", None)
            tag = headers.get("If-Match")
            now = current.get(str((case.path_parameters or {}).get("game_id")))
            self.origin = None if tag is None else "linked" if tag == now else tag
            if now is not None and stale(tag, now):
                headers["If-Match"], self.origin = now, "refreshed"

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            operation = case.operation.definition.raw.get("operationId")
            if response.status_code in (200, 201) and operation in SNAPSHOTS:  # a replayed one may be older
                game, tag = str(response.json()["id"]), response.headers["etag"][0]
                current[game] = max(tag, current.get(game, tag), key=lambda t: int(t.strip('"')))
            if operation in ACTIONS:
                acted.append((operation, response.status_code, self.origin))

        def validate_response(self, response: Any, case: Any, *args: Any, **kwargs: Any) -> None:
            try:
                super().validate_response(response, case, *args, **kwargs)
            except Exception as error:
                failures.append(f"{case.operation.label} -> {response.status_code}: {error}")
                raise

    # A replayed scenario may draw otherwise (random deals, the solver's time limit): Hypothesis then stops with
    # FlakyStrategyDefinition, which schemathesis's own runner passes over too; every step's checks are in `failures`.
    with contextlib.suppress(FlakyStrategyDefinition):
        OnCurrentVersions.run(
            settings=settings(
                max_examples=examples, stateful_step_count=steps, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
        )  # fmt: skip
    assert not failures, "\n\n".join(failures)  # every step's checks, replayed or not
    return acted
