"""The keys of events and their delivery: the outboxes (each in the slot of what it tells of: a player, a
challenge, an app), the delivery queue ``{events}``, and each app's webhook endpoints, their logs and health."""

from __future__ import annotations

from typing import Final
from uuid import UUID

from pyramide.service.infra.keyspace.players import player_tag


def player_outbox(player: UUID) -> str:
    """The events of one player's changes (a game won, lost or abandoned; erased; banned), in its slot, in the order
    they were made: written by the script that makes the change (``lua/emit_event.lua``)."""
    return player_tag(player) + "outbox"


def challenge_outbox(challenge: str) -> str:
    """The events of one daily challenge (closed; an app player entered or left its board), in its slot."""
    return f"pyr:{{c:{challenge}}}:outbox"


def challenge_closed_event(challenge: str) -> str:
    """Set once the challenge's ``challenge.closed`` event was emitted (with it, in its slot): never emitted twice."""
    return f"pyr:{{c:{challenge}}}:closed-event"


def app_outbox(app_id: UUID | str) -> str:
    """The app's own outbox, in the app's slot: events that must outlive the player they concern (player.erased)."""
    return f"pyr:{{app:{app_id}}}:outbox"


def outbox_of_one_app(outbox: str) -> bool:
    """Whether every event of ``outbox`` goes to one app's endpoints: a player's or an app's, not a challenge's or
    a board's (whose events go to several apps, or to every app)."""
    return outbox.startswith(("pyr:{p:", "pyr:{app:"))


OUTBOX_PATTERN: Final = "pyr:*:outbox"
"""What the outbox sweep scans for: every outbox, whatever its slot."""

EVENTS_DUE: Final = "pyr:{events}:due"
"""The outboxes with events to deliver (members: outbox key names), under the ms from which they are due."""
EVENTS_CLAIMS: Final = "pyr:{events}:claims"
"""The outboxes a process works on (fields: outbox key names), each with its claim's lease (the ms it runs out at):
a new event marks a claimed outbox due, and no other claim may take it before the holder lets it go."""


def webhooks(app_id: UUID) -> str:
    """An app's webhook endpoints (a hash: endpoint id → its JSON), in the app's slot."""
    return f"pyr:{{app:{app_id}}}:webhooks"


def webhook_log(app_id: UUID, webhook_id: str) -> str:
    """An endpoint's deliveries, newest last (a ZSET of event ids by the ms they were first tried)."""
    return f"pyr:{{app:{app_id}}}:webhook:{webhook_id}:log"


def webhook_deliveries(app_id: UUID, webhook_id: str) -> str:
    """An endpoint's deliveries by event id (a hash: event id → the delivery's JSON, its body included)."""
    return f"pyr:{{app:{app_id}}}:webhook:{webhook_id}:deliveries"


def webhook_health(app_id: UUID, webhook_id: str) -> str:
    """An endpoint's health (a hash of ms: ``failing_since``, ``failures`` in a row, ``next_probe``, ``last_success``,
    ``disabled_at``, and ``disabled_reason``): whether deliveries try it (``events/store.py``)."""
    return f"pyr:{{app:{app_id}}}:webhook:{webhook_id}:health"


def webhook_keys(app_id: UUID, webhook_id: str) -> tuple[str, str, str]:
    """Every key of one endpoint beside its field in ``webhooks``: its log, its deliveries and its health (all in the
    app's slot), which go when it does."""
    return (
        webhook_log(app_id, webhook_id),
        webhook_deliveries(app_id, webhook_id),
        webhook_health(app_id, webhook_id),
    )


WEBHOOK_APPS: Final = "pyr:{events}:apps"
"""The apps with at least one webhook endpoint (a set of app ids): whom an event for every app (``*``) goes to."""

REDELIVERIES: Final = "pyr:{events}:redeliver"
"""Redeliveries asked for and not yet sent (a list of ``<app id> <endpoint id> <event id>``)."""


def delivery_cursors(outbox: str) -> str:
    """Where each endpoint stands in one outbox (a hash: endpoint id → JSON of its last entry done, its attempts at
    the next one and when it is tried again), in the outbox's slot: one script writes them only while the outbox
    exists and deletes them with it (``lua/outbox_settle.lua``), and an erased player's go with its keys."""
    return f"{outbox}:cursors"
