"""The operator's routes for apps: create one (its key shown once), list them, revoke one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, get_args

from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State
from litestar.params import Parameter
from pydantic import TypeAdapter

from pyramide.service.accounts.app_players import AppPlayers, valid_external_id
from pyramide.service.accounts.app_schemas import (
    AppList,
    AppView,
    CreateAppBody,
    CreatedApp,
    IssuedSession,
    RotatedKey,
    RotateKeyBody,
    Scope,
)
from pyramide.service.accounts.apps import App, AppStore
from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.principal import Principal
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.body import parse_body
from pyramide.service.http.full import OPERATOR, WHILE_FULL
from pyramide.service.http.injection import Injected
from pyramide.service.http.limits import AddressLimits, rate_limit_headers
from pyramide.service.http.params import IdText, id_of
from pyramide.service.http.responses import problems
from pyramide.service.infra.settings import LimitName

AdminRequest = Request[Principal, None, State]
AppRequest = Request[App, App, State]
_CREATE = TypeAdapter(CreateAppBody)
_ROTATE = TypeAdapter(RotateKeyBody)
_SCOPES = frozenset(get_args(Scope))


def operator_only(principal: Principal) -> None:
    """Apps are the operator's to manage: an app's key is 403 ``forbidden`` here."""
    if not principal.is_operator:
        raise DomainError(ErrorCode.FORBIDDEN)


def _view(app: App) -> AppView:
    scopes: list[Any] = sorted(app.scopes & _SCOPES)
    created = datetime.fromtimestamp(app.created_ms / 1000, UTC)
    return AppView(id=app.id, name=app.name, scopes=scopes, created_at=created)


class AppAdminController(Controller):
    path = "/apps"
    tags = ["admin"]

    @post(
        "/",
        operation_id="createApp",
        kept_answer=True,
        secret_idempotency_key=True,
        location=True,
        request_body=CreateAppBody,
        summary="Create an app and its server key (operator)",
        description="The key is in this answer only; the service keeps its hash. 403 `forbidden` for an app's key.",
        responses=problems(400, 401, 403, 404, 413, 422),
    )
    async def create(
        self, request: AdminRequest, apps: Injected[AppStore], audit: Injected[AuditLog]
    ) -> Response[CreatedApp]:
        operator_only(request.user)
        body = await parse_body(request, _CREATE)
        limits = body.limits.values() if body.limits else {}
        app, key = await apps.create(body.name, frozenset(body.scopes), limits)
        await audit.record(request.user, "create_app", f"app:{app.id}", detail={"name": app.name})
        headers = {"Location": f"/v1/admin/apps/{app.id}"}
        return Response(CreatedApp(**_view(app).model_dump(), key=key), status_code=201, headers=headers)

    @get(
        "/{app_id:str}",
        operation_id="getApp",
        summary="One app (operator)",
        description="Its id, name, scopes and creation time; never its key. 404 `not_found` for an app that does not"
        " exist or was revoked.",
        responses=problems(400, 401, 403, 404),
    )
    async def read(self, request: AdminRequest, app_id: IdText, apps: Injected[AppStore]) -> AppView:
        operator_only(request.user)
        app = await apps.get(id_of(app_id))
        if app is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        return _view(app)

    @get(
        "/",
        operation_id="listApps",
        summary="Every app (operator)",
        description="Each app's id, name, scopes and creation time; never a key.",
        responses=problems(401, 403, 404),
    )
    async def list(self, request: AdminRequest, apps: Injected[AppStore]) -> AppList:
        operator_only(request.user)
        return AppList(entries=[_view(app) for app in await apps.list()])

    @post(
        "/{app_id:str}/key",
        operation_id="rotateAppKey",
        kept_answer=True,
        secret_idempotency_key=True,
        request_body=RotateKeyBody,
        opt={WHILE_FULL: OPERATOR},
        summary="Replace an app's server key (operator)",
        description="A new key, in this answer only; the replaced key keeps working for `grace_s` seconds (default a"
        " day, 0: refused at once), time to roll the new one out, then every process refuses it. Audited"
        " (`rotate_app_key`). 404 `not_found` for an app that does not exist or was revoked; 403 `forbidden` for an"
        " app's key.",
        responses=problems(400, 401, 403, 404, 413, 422),
        status_code=201,
    )
    async def rotate_key(
        self, request: AdminRequest, app_id: IdText, apps: Injected[AppStore], audit: Injected[AuditLog]
    ) -> RotatedKey:
        operator_only(request.user)
        body = await parse_body(request, _ROTATE)
        rotated = await apps.rotate_key(id_of(app_id), body.grace_s)
        if rotated is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        app, key, until = rotated
        await audit.record(request.user, "rotate_app_key", f"app:{app.id}", detail={"grace_s": str(body.grace_s)})
        return RotatedKey(
            **_view(app).model_dump(), key=key, old_key_valid_until=datetime.fromtimestamp(until / 1000, UTC)
        )

    @delete(
        "/{app_id:str}",
        operation_id="revokeApp",
        opt={WHILE_FULL: OPERATOR},
        summary="Revoke an app's key (operator)",
        description="Every process refuses the key from the next request on.",
        responses=problems(401, 403, 404),
        status_code=204,
    )
    async def revoke(
        self, request: AdminRequest, app_id: IdText, apps: Injected[AppStore], audit: Injected[AuditLog]
    ) -> Response[None]:
        operator_only(request.user)
        if not await apps.revoke(id_of(app_id)):
            raise DomainError(ErrorCode.NOT_FOUND)
        await audit.record(request.user, "revoke_app", f"app:{app_id}")
        return Response(None, status_code=204)


ExternalId = Annotated[
    str, Parameter(max_length=512, description="The app's own id for its user (1–128 visible ASCII, no `/`).")
]


class AppController(Controller):
    """The routes of an app's own (its key, scope ``players``)."""

    path = "/v1/apps/me"
    tags = ["apps"]

    @get(
        "/",
        operation_id="getCurrentApp",
        summary="The calling app (app key)",
        description="Its id, name, scopes and creation time, read with its own key (any scope): what a back end checks"
        " at start-up, and how it learns its id. Never the key.",
        responses=problems(401),
    )
    async def me(self, request: AppRequest) -> AppView:
        return _view(request.user)

    @post(
        "/players/{external_id:str}/sessions",
        operation_id="createSession",
        kept_answer=True,
        secret_idempotency_key=True,
        client_ip=True,
        summary="Issue a session for one of the app's users (app key, scope `players`)",
        description="A bearer token for that user's player (created on first use), for the app's front end, valid"
        " for `PYRAMIDE_SESSION_TTL_S`; up to 10 may be valid at once (issuing an 11th ends the oldest). Each"
        " issue counts against the `players` rate limit (the app's own, or the app's bucket of the end user's"
        " address named in `Pyramide-Client-IP` and the app's); creating the user's player also takes one of the"
        " daily quota `quota_players`: 429 past either. It works on every player route as the player's token does,"
        " but cannot replace the token (`rotatePlayerToken`: 403); it stops working when it"
        " expires, when the app is revoked and when the player is erased. 400 `invalid_player_header` for an"
        " external id that is not 1–128 visible ASCII characters other than `/`; 403 `forbidden` without the"
        " `players` scope, 403 `player_banned` for a banned user (also one whose player was erased).",
        responses=problems(400, 401, 403, 413, 429),
        status_code=201,
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def create_session(
        self,
        request: AppRequest,
        external_id: ExternalId,
        app_players: Injected[AppPlayers],
        address_limits: Injected[AddressLimits],
    ) -> Response[IssuedSession]:
        app = request.user
        # every session is one more key, for a day
        await address_limits.check(request, LimitName.PLAYERS, with_quota=False)

        async def creating(_: App) -> None:
            await address_limits.take_quota(request, LimitName.PLAYERS)

        token, expires = await app_players.issue_session(app, valid_external_id(external_id), creating)
        return Response(IssuedSession(token=token, expires_at=expires), status_code=201)
