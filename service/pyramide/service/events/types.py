"""The events an app can subscribe to, by the name its webhook endpoints are registered and sent with."""

from __future__ import annotations

import enum


class EventType(enum.StrEnum):
    """Every event type: each is emitted by the script that saves its change (``infra/outbox.py``)."""

    GAME_WON = "game.won"
    """An app player won a game."""
    GAME_LOST = "game.lost"
    """An app player's game reached a dead end."""
    GAME_ABANDONED = "game.abandoned"
    """An app player abandoned a game."""
    CHALLENGE_CLOSED = "challenge.closed"
    """A daily challenge closed: its code, nonce and final board can be read (sent to every app)."""
    CHALLENGE_ENTRY = "challenge.entry"
    """An app player's entry appeared on, changed on or left a daily challenge's board."""
    PLAYER_ERASED = "player.erased"
    """An app player was erased."""
    WEBHOOK_TEST = "webhook.test"
    """A test event an app asked for (``sendTestWebhook``), to its one endpoint only, whatever it subscribes to."""
    PLAYER_BANNED = "player.banned"
    """An app player was banned (or the ban lifted: see the payload)."""
