"""The schema-driven fuzzing of the API (Schemathesis): its configuration and the stateful
workflows, shared by the in-process and the live-server runs."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.errors import FlakyStrategyDefinition

from pyramide.service.http.headers import parse_if_match
from pyramide.service.http.problems import ProblemError

OWN_PLAYER = frozenset({"rotatePlayerToken", "erasePlayer"})
"""Operations that end the shared player's token: each case is sent as a player of its own."""


ACTIONS = frozenset({"playMove", "tap", "abandonGame"})
"""The operations that act on a game's version (If-Match)."""


SNAPSHOTS = ACTIONS | {"createGame", "getGame"}
"""The operations that answer a game's snapshot, its version as the ETag."""


def configure(schema: Any) -> Any:
    """Every check on, as schemathesis ships them, with nothing added to what a schema-valid request may get: a
    412 (If-Match naming a version the game is not at) counts as rejected valid data, so the requests name the
    game's current version (the links carry its ETag)."""
    return schema


def can_be_invalid(operation: dict[str, Any], document: dict[str, Any]) -> bool:
    """Whether a request to ``operation`` (of ``document``) can be made invalid: it has a body, or a parameter that
    constrains its value (a free-form header such as Accept-Language accepts any string). Shared parameters are
    references into ``document``'s components."""
    free_form = {"type": "string"}
    shared = document.get("components", {}).get("parameters", {})
    parameters = [shared[p["$ref"].rpartition("/")[2]] if "$ref" in p else p for p in operation.get("parameters", [])]
    constrained = [p for p in parameters if p["in"] != "header" or p["schema"] != free_form]
    return bool(operation.get("requestBody") or constrained)


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
