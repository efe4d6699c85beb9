"""Webhook endpoints' bodies: registering one, its view (the secret shown once), its deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from pyramide.service.events.types import EventType
from pyramide.service.http.schemas import StrictModel

WEBHOOK_ID_PATTERN = r"^wh_[a-z2-7]{26}$"
EVENT_ID_PATTERN = r"^evt_[a-z2-7]{26}$"


class CreateWebhookBody(StrictModel):
    url: str = Field(
        min_length=1,
        max_length=2048,
        description="Where events are POSTed: `https://` to a public address (every address its host resolves"
        " to is checked, at registration and at every delivery); 422 `webhook_url_refused` otherwise.",
    )
    events: list[EventType] = Field(min_length=1, max_length=len(EventType), description="The event types sent.")
    description: str | None = Field(None, max_length=200, description="A note of the app's own.")


class WebhookView(BaseModel):
    id: str = Field(description="`wh_` and 26 lowercase base32 characters.")
    url: str
    events: list[EventType]
    description: str | None
    created_at: datetime


class CreatedWebhook(WebhookView):
    secret: str = Field(
        description="The signing secret (`whsec_` and 32 random bytes in base64), shown once: verify deliveries"
        " with it as Standard Webhooks says."
    )


class RotatedSecret(BaseModel):
    secret: str = Field(
        description="The new signing secret, shown once; the old one keeps signing beside it for 24 hours (both"
        " signatures in `webhook-signature`)."
    )


class WebhookList(BaseModel):
    entries: list[WebhookView]


class DeliveryView(BaseModel):
    event_id: str
    type: EventType
    status: Literal["pending", "delivered", "retrying", "failed"]
    attempts: int
    last_status: int | None = Field(description="The HTTP status of the last attempt's answer; null: none came.")
    last_error: str | None = Field(description="Why the last attempt got no answer (`timeout`, `refused: …`, …).")
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime


class DeliveryPage(BaseModel):
    entries: list[DeliveryView]
    next_cursor: str | None


class Redelivery(BaseModel):
    event_id: str
    status: Literal["pending"] = Field(description="Queued: the deliveries log shows the outcome.")
