"""Apps: the back ends that call the service with a server key of their own, and who may act on the admin routes."""

from pyramide.service.apps.principal import Principal
from pyramide.service.apps.store import APP_KEY_PREFIX, SCOPES, App, AppStore, is_app_key

__all__ = ["APP_KEY_PREFIX", "SCOPES", "App", "AppStore", "Principal", "is_app_key"]
