"""Apps: the back ends that call the service with a server key of their own, and who may act on the admin routes."""

from pyramide.service.apps.players import SESSION_PREFIX, AppPlayers, valid_external_id
from pyramide.service.apps.principal import Principal
from pyramide.service.apps.store import APP_KEY_PREFIX, SCOPES, App, AppStore, is_app_key

__all__ = [
    "APP_KEY_PREFIX",
    "SCOPES",
    "SESSION_PREFIX",
    "App",
    "AppPlayers",
    "AppStore",
    "Principal",
    "is_app_key",
    "valid_external_id",
]
