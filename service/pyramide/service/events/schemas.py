"""Events' bodies: what an app's webhook endpoints receive (one envelope per event type, ``id``, ``type``,
``timestamp``, ``data``, and one payload model per type; the OpenAPI document lists them under ``webhooks``,
``WEBHOOKS``; the payloads are what the emitting scripts write to the outboxes, ``infra/outbox.py``, so a change here
is a change to them too, ``docs/events.md``), and the webhook endpoints' own: registering one, its view (the secret
shown once), its deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal
from uuid import UUID

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
    status: Literal["enabled", "disabled"] = Field(
        description="`disabled`: it failed without a single success for `PYRAMIDE_WEBHOOK_DISABLE_AFTER_S` (5 days);"
        " nothing is sent to it, its events are `skipped` in its log, until `enableWebhook`."
    )
    disabled_at: datetime | None = Field(description="When it was disabled; null while enabled.")
    disabled_reason: Literal["failing"] | None = Field(
        description="Why it was disabled: `failing`, no delivery succeeded for too long; null while enabled."
    )
    failing_since: datetime | None = Field(
        description="The first failed attempt since its last success; null: its last attempt succeeded (or none"
        " was made)."
    )
    last_success_at: datetime | None = Field(description="Its last successful delivery; null: none yet.")


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
    status: Literal["pending", "delivered", "retrying", "failed", "skipped"] = Field(
        description="`skipped`: not sent, its endpoint was disabled when its turn came (redeliver it by hand)."
    )
    attempts: int
    last_status: int | None = Field(description="The HTTP status of the last attempt's answer; null: none came.")
    last_error: str | None = Field(
        description="Why the last attempt got no answer (`timeout`, `refused: …`, a connection error's name)."
    )
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime


class DeliveryPage(BaseModel):
    entries: list[DeliveryView]
    next_cursor: str | None


class Redelivery(BaseModel):
    event_id: str
    status: Literal["pending"] = Field(description="Queued: the deliveries log shows the outcome.")


EventId = Annotated[str, Field(pattern=r"^evt_[a-z2-7]{26}$", description="The event's id: the same on every attempt.")]


class GamePayload(BaseModel):
    """An app player's game ended (``game.won``, ``game.lost``, ``game.abandoned``)."""

    game_id: UUID = Field(description="The game.")
    player_id: UUID = Field(description="The player.")
    external_id: str = Field(description="The app's own id of its user (as sent in `Pyramide-Player`).")
    code: str | None = Field(description="The deal code; null for a daily challenge's game.")
    challenge: str | None = Field(description="The daily challenge the game was an attempt at, if any.")
    rules: str = Field(description="The rule set.")
    moves: int = Field(ge=0)
    undos: int = Field(ge=0)
    hints: int = Field(ge=0)
    score: int
    elapsed_ms: int = Field(ge=0, description="Server time from the first move to the end.")
    finished_at: datetime = Field(description="When the game ended.")


class ChallengeEntryDetails(BaseModel):
    """An entry as a challenge's board shows it, without a deal code (sealed until the close)."""

    player: UUID
    challenge: str
    elapsed_ms: int = Field(ge=0)
    moves: int = Field(ge=0)
    undos: int = Field(ge=0)
    hints: int = Field(ge=0)
    score: int
    finished_at: datetime
    name: str | None = Field(description="The player's name when the win was entered.")
    tier: Literal["clean", "assisted"]
    identity: Literal["app", "anonymous"]
    app: str | None = Field(description="The app's name when the win was entered.")


class ChallengeEntryPayload(BaseModel):
    """An app player's entry entered, improved on, or left a daily challenge's board (``challenge.entry``)."""

    challenge: str = Field(description="The challenge.")
    player_id: UUID
    external_id: str = Field(description="The app's own id of its user.")
    change: Literal["entered", "improved", "left"] = Field(
        description="`entered`: on the board (also when a lifted ban puts it back); `improved`: a better win"
        " replaced it; `left`: off the board (a ban, an annulment, an erasure)."
    )
    entry: ChallengeEntryDetails | None = Field(description="The entry; null when it left.")


class ChallengeClosedPayload(BaseModel):
    """A daily challenge closed (``challenge.closed``, once, to every app): what was sealed is public now."""

    challenge: str
    preset: str = Field(description="The challenge's rule preset.")
    closed_at: datetime
    code: str = Field(description="The deal code.")
    nonce: str = Field(description="The commitment's nonce.")
    commitment: str = Field(description="The commitment published while the challenge was open.")


class PlayerErasedPayload(BaseModel):
    """An app player was erased (``player.erased``): only the ids, everything else is gone."""

    player_id: UUID
    external_id: str = Field(description="The app's own id of its user.")


class PlayerBannedPayload(BaseModel):
    """An app player was banned, or its ban lifted (``player.banned``)."""

    player_id: UUID
    external_id: str = Field(description="The app's own id of its user.")
    banned: bool = Field(description="True: banned; false: the ban was lifted.")
    reason: str | None = Field(description="The moderator's reason.")


class WebhookTestPayload(BaseModel):
    """A test event (``webhook.test``): sent when the app asked for it, to the endpoint it named."""

    webhook_id: str = Field(description="The endpoint it was sent to.")
    message: str = Field(description="A fixed text: nothing happened in the service.")


class _Event(BaseModel):
    id: EventId
    timestamp: datetime = Field(description="When the change was made (UTC).")


class GameWonEvent(_Event):
    type: Literal["game.won"]
    data: GamePayload


class GameLostEvent(_Event):
    type: Literal["game.lost"]
    data: GamePayload


class GameAbandonedEvent(_Event):
    type: Literal["game.abandoned"]
    data: GamePayload


class ChallengeEntryEvent(_Event):
    type: Literal["challenge.entry"]
    data: ChallengeEntryPayload


class ChallengeClosedEvent(_Event):
    type: Literal["challenge.closed"]
    data: ChallengeClosedPayload


class PlayerErasedEvent(_Event):
    type: Literal["player.erased"]
    data: PlayerErasedPayload


class PlayerBannedEvent(_Event):
    type: Literal["player.banned"]
    data: PlayerBannedPayload


class WebhookTestEvent(_Event):
    type: Literal["webhook.test"]
    data: WebhookTestPayload


WEBHOOKS: Final[dict[EventType, type[BaseModel]]] = {
    EventType.GAME_WON: GameWonEvent,
    EventType.GAME_LOST: GameLostEvent,
    EventType.GAME_ABANDONED: GameAbandonedEvent,
    EventType.CHALLENGE_ENTRY: ChallengeEntryEvent,
    EventType.CHALLENGE_CLOSED: ChallengeClosedEvent,
    EventType.PLAYER_ERASED: PlayerErasedEvent,
    EventType.PLAYER_BANNED: PlayerBannedEvent,
    EventType.WEBHOOK_TEST: WebhookTestEvent,
}
"""Every event type's request body, as the OpenAPI document's ``webhooks`` show them."""
