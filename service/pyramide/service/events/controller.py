"""An app's webhook endpoints (its key): register, list, read, delete, rotate the secret, enable a disabled one again,
read the deliveries and redeliver one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State
from litestar.params import Parameter, QueryParameter
from pydantic import TypeAdapter

from pyramide.service.accounts import App
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.events.delivery import Deliverer
from pyramide.service.events.guard import UrlRefusedError
from pyramide.service.events.schemas import (
    EVENT_ID_PATTERN,
    WEBHOOK_ID_PATTERN,
    CreatedWebhook,
    CreateWebhookBody,
    DeliveryPage,
    DeliveryView,
    Redelivery,
    RotatedSecret,
    WebhookList,
    WebhookView,
)
from pyramide.service.events.store import Delivery, Endpoint, Health, WebhookStore
from pyramide.service.http.body import parse_body
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import DEFAULT_LIMIT, Limit, check_paging_query
from pyramide.service.http.responses import problems

AppRequest = Request[App, App, State]
_CREATE = TypeAdapter(CreateWebhookBody)
WebhookId = Annotated[str, Parameter(pattern=WEBHOOK_ID_PATTERN, description="The endpoint's id (`wh_…`).")]
EventId = Annotated[str, Parameter(pattern=EVENT_ID_PATTERN, description="The event's id (`evt_…`).")]
DeliveriesCursor = Annotated[
    str | None,
    QueryParameter(
        required=False,
        pattern=r"^[0-9]{1,4}$",
        description="Where the page starts: the previous page's `next_cursor`; omit for the first page.",
    ),
]


def _moment(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _view(endpoint: Endpoint, health: Health) -> WebhookView:
    return WebhookView(
        id=endpoint.id,
        url=endpoint.url,
        events=endpoint.events,
        description=endpoint.description,
        created_at=datetime.fromtimestamp(endpoint.created_ms / 1000, UTC),
        status="disabled" if health.disabled_ms is not None else "enabled",
        disabled_at=_moment(health.disabled_ms),
        disabled_reason="failing" if health.disabled_ms is not None else None,
        failing_since=_moment(health.failing_since_ms),
        last_success_at=_moment(health.last_success_ms),
    )


def _delivery(delivery: Delivery) -> DeliveryView:
    return DeliveryView(
        event_id=delivery.event_id,
        type=delivery.type,
        status=delivery.status,
        attempts=delivery.attempts,
        last_status=delivery.last_status,
        last_error=delivery.last_error,
        next_attempt_at=_moment(delivery.next_attempt_ms),
        delivered_at=_moment(delivery.delivered_ms),
        created_at=datetime.fromtimestamp(delivery.created_ms / 1000, UTC),
    )


class WebhookController(Controller):
    """An app's webhook endpoints (its key)."""

    path = "/v1/apps/me/webhooks"
    tags = ["apps"]

    @post(
        "/",
        operation_id="createWebhook",
        location=True,
        kept_answer=True,
        secret_idempotency_key=True,
        request_body=CreateWebhookBody,
        summary="Register a webhook endpoint (app key)",
        description="Events of the app's players (and every app's `challenge.closed`) of the types named are POSTed"
        " to `url`, signed as Standard Webhooks says with the `secret` in this answer (shown once). 422"
        " `webhook_url_refused` for a URL that is not `https://` or whose host resolves to any address that is not"
        " public (private, loopback, link-local, shared, reserved, multicast; the detail says why), 409"
        " `too_many_webhooks` past 10 endpoints.",
        responses=problems(400, 401, 409, 413, 422),
        status_code=201,
    )
    async def create(
        self, request: AppRequest, webhooks: Injected[WebhookStore], deliverer: Injected[Deliverer]
    ) -> Response[CreatedWebhook]:
        body = await parse_body(request, _CREATE)
        try:
            await deliverer.check(request.user.id, body.url)
        except UrlRefusedError as refused:
            raise DomainError(ErrorCode.WEBHOOK_URL_REFUSED, reason=refused.reason.value) from None
        events = list(dict.fromkeys(e.value for e in body.events))
        endpoint = await webhooks.add(request.user.id, body.url, events, body.description)
        view = _view(endpoint, Health())
        headers = {"Location": f"/v1/apps/me/webhooks/{view.id}"}
        return Response(CreatedWebhook(**view.model_dump(), secret=endpoint.secret), status_code=201, headers=headers)

    @get(
        "/",
        operation_id="listWebhooks",
        summary="The app's webhook endpoints (app key)",
        description="Oldest first, each with its `status` (`enabled`, `disabled`) and health; never a secret.",
        responses=problems(401),
    )
    async def list(self, request: AppRequest, webhooks: Injected[WebhookStore]) -> WebhookList:
        return WebhookList(
            entries=[_view(e, await webhooks.health(e)) for e in await webhooks.endpoints(request.user.id)]
        )

    @get(
        "/{webhook_id:str}",
        operation_id="getWebhook",
        summary="One webhook endpoint (app key)",
        description="404 `webhook_not_found` for an id that is not one of the app's endpoints.",
        responses=problems(400, 401, 404),
    )
    async def read(self, request: AppRequest, webhook_id: WebhookId, webhooks: Injected[WebhookStore]) -> WebhookView:
        endpoint = await webhooks.get(request.user.id, webhook_id)
        return _view(endpoint, await webhooks.health(endpoint))

    @delete(
        "/{webhook_id:str}",
        operation_id="deleteWebhook",
        summary="Delete a webhook endpoint and its deliveries' log (app key)",
        description="Nothing more is sent to it. 404 `webhook_not_found`.",
        responses=problems(400, 401, 404),
        status_code=204,
    )
    async def remove(
        self, request: AppRequest, webhook_id: WebhookId, webhooks: Injected[WebhookStore]
    ) -> Response[None]:
        await webhooks.delete(request.user.id, webhook_id)
        return Response(None, status_code=204)

    @post(
        "/{webhook_id:str}/secret",
        operation_id="rotateWebhookSecret",
        kept_answer=True,
        secret_idempotency_key=True,
        summary="Replace a webhook endpoint's secret (app key)",
        description="The new secret is in this answer only; for 24 hours deliveries carry a signature by each (the"
        " old one's too, so receivers can switch at their pace). 404 `webhook_not_found`.",
        responses=problems(400, 401, 404, 413),
        status_code=200,
    )
    async def rotate(
        self, request: AppRequest, webhook_id: WebhookId, webhooks: Injected[WebhookStore]
    ) -> RotatedSecret:
        return RotatedSecret(secret=(await webhooks.rotate(request.user.id, webhook_id)).secret)

    @post(
        "/{webhook_id:str}/enable",
        operation_id="enableWebhook",
        kept_answer=True,
        summary="Enable a disabled webhook endpoint again (app key)",
        description="Events whose turn comes from now on are sent to it again, afresh (not failing); the events it"
        " skipped while disabled are not sent again by themselves: redeliver them by hand (`redeliverWebhookEvent`)."
        " Enabling an enabled endpoint that is failing ends its back-off: its next event is tried at once."
        " 404 `webhook_not_found`.",
        responses=problems(400, 401, 404, 413),
        status_code=200,
    )
    async def enable(self, request: AppRequest, webhook_id: WebhookId, webhooks: Injected[WebhookStore]) -> WebhookView:
        endpoint = await webhooks.enable(request.user.id, webhook_id)
        return _view(endpoint, await webhooks.health(endpoint))

    @get(
        "/{webhook_id:str}/deliveries",
        operation_id="listWebhookDeliveries",
        summary="A webhook endpoint's deliveries, newest first (app key)",
        description="Each event sent or being sent: its id, type, status (`pending`, `delivered`, `retrying`,"
        " `failed`, `skipped`: not sent, the endpoint was disabled), attempts, the last answer's status or error,"
        " when it is tried next and when it was delivered; the newest 1,000. 404 `webhook_not_found`.",
        responses=problems(400, 401, 404),
    )
    async def deliveries(
        self,
        request: AppRequest,
        webhook_id: WebhookId,
        webhooks: Injected[WebhookStore],
        limit: Limit = DEFAULT_LIMIT,
        cursor: DeliveriesCursor = None,
    ) -> DeliveryPage:
        check_paging_query(request)
        endpoint = await webhooks.get(request.user.id, webhook_id)
        offset = int(cursor or 0)
        found, total = await webhooks.deliveries(endpoint, offset, limit)
        following = offset + limit
        return DeliveryPage(
            entries=[_delivery(d) for d in found], next_cursor=str(following) if following < total else None
        )

    @post(
        "/{webhook_id:str}/test",
        operation_id="sendTestWebhook",
        kept_answer=True,
        summary="Send a test event to a webhook endpoint (app key)",
        description="A `webhook.test` event to this endpoint alone (whatever events it subscribes to), signed as every"
        " event is, delivered once: its outcome is in the endpoint's deliveries log under the answer's `event_id`"
        " (redeliver it from there). Nothing else happens in the service. 404 `webhook_not_found`.",
        responses=problems(400, 401, 404, 413),
        status_code=202,
    )
    async def test(self, request: AppRequest, webhook_id: WebhookId, webhooks: Injected[WebhookStore]) -> Redelivery:
        endpoint = await webhooks.get(request.user.id, webhook_id)
        return Redelivery(event_id=await webhooks.send_test(endpoint), status="pending")

    @post(
        "/{webhook_id:str}/deliveries/{event_id:str}/redeliver",
        operation_id="redeliverWebhookEvent",
        kept_answer=True,
        summary="Send one delivered, failed or skipped event again (app key)",
        description="The same id and body, a new `webhook-timestamp` and signature; the log shows the outcome."
        " 404 `webhook_not_found`, 404 `delivery_not_found` for an event not in the endpoint's log.",
        responses=problems(400, 401, 404, 413),
        status_code=202,
    )
    async def redeliver(
        self, request: AppRequest, webhook_id: WebhookId, event_id: EventId, webhooks: Injected[WebhookStore]
    ) -> Response[Redelivery]:
        endpoint = await webhooks.get(request.user.id, webhook_id)
        await webhooks.redeliver(endpoint, event_id)
        return Response(Redelivery(event_id=event_id, status="pending"), status_code=202)
