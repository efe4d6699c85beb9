"""Accounts: who calls the service and what is done to them. Players (anonymous, or an app's users) and their
tokens; apps, their keys, their players and sessions; the bearer authentication of every route; a player's data,
exported and erased on request (GDPR); moderation (bans, annulments) and its audit log.

One package, one consistency boundary: every other domain names a player, none of them is named here
(:mod:`accounts.ports` states what a player's erasure and a ban need of the games and the boards)."""

from pyramide.service.accounts.annulments import Annulments
from pyramide.service.accounts.app_players import SESSION_PREFIX, AppPlayers, valid_external_id
from pyramide.service.accounts.apps import APP_KEY_PREFIX, SCOPES, App, AppStore, is_app_key
from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.authentication import APP_TOKENS, OPEN_TO_BANNED, bearer_player, bearer_token
from pyramide.service.accounts.bans import BANNED, Bans
from pyramide.service.accounts.player import Player
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.accounts.principal import Principal
from pyramide.service.accounts.privacy import PlayerData

__all__ = [
    "APP_KEY_PREFIX",
    "APP_TOKENS",
    "BANNED",
    "OPEN_TO_BANNED",
    "SCOPES",
    "SESSION_PREFIX",
    "Annulments",
    "App",
    "AppPlayers",
    "AppStore",
    "AuditLog",
    "Bans",
    "Player",
    "PlayerData",
    "PlayerStore",
    "Principal",
    "bearer_player",
    "bearer_token",
    "is_app_key",
    "valid_external_id",
]
