"""Events: what an app's back end is told of its players' games and of the daily challenges (webhooks)."""

from pyramide.service.events.delivery import Deliverer
from pyramide.service.events.schemas import WEBHOOKS
from pyramide.service.events.store import WebhookStore
from pyramide.service.events.types import EventType

__all__ = ["WEBHOOKS", "Deliverer", "EventType", "WebhookStore"]
