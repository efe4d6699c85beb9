"""Service settings: one validated object, read once from the environment (pydantic-settings), in groups by
concern (``settings.limits``, ``settings.webhooks``, …) so that each service is given only its own. Every variable
keeps its flat name (``PYRAMIDE_LIMIT_MOVES``; :mod:`.environment`) and has its row in ``docs/operations.md``; a
test holds the two to each other. The groups live in :mod:`.plumbing`, :mod:`.domain` and :mod:`.limits`; this
package imports no other module of ``infra`` but :mod:`..signing` and :mod:`..cpus`, which import none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from pyramide.service.infra.settings import environment
from pyramide.service.infra.settings.domain import (
    Challenges,
    Erasure,
    Play,
    Retention,
    Secrets,
    SolverSettings,
    Webhooks,
)
from pyramide.service.infra.settings.group import Group
from pyramide.service.infra.settings.limits import (
    MAX_UNFINISHED_GAMES,
    QUOTA_GAMES,
    QUOTA_PLAYERS,
    AppQuotas,
    AppRateLimits,
    Caps,
    LimitName,
    Limits,
    Quotas,
    RateLimits,
    no_limits,
)
from pyramide.service.infra.settings.plumbing import (
    ClockSettings,
    Durability,
    EmbeddedRedis,
    HttpSettings,
    Logs,
    MetricsSettings,
    Proxies,
    RedisSettings,
    Streams,
)

__all__ = [
    "MAX_UNFINISHED_GAMES",
    "QUOTA_GAMES",
    "QUOTA_PLAYERS",
    "AppQuotas",
    "AppRateLimits",
    "Caps",
    "Challenges",
    "ClockSettings",
    "Durability",
    "EmbeddedRedis",
    "Erasure",
    "Group",
    "HttpSettings",
    "LimitName",
    "Limits",
    "Logs",
    "MetricsSettings",
    "Play",
    "Proxies",
    "Quotas",
    "RateLimits",
    "RedisSettings",
    "Retention",
    "Secrets",
    "Settings",
    "SolverSettings",
    "Streams",
    "Webhooks",
    "as_environment",
    "no_limits",
    "setting_fields",
    "settings_errors",
    "unknown_variables",
]


class Settings(BaseSettings):
    """Everything the service reads from its environment, validated at start-up (a bad value stops it with the
    variable's name). Constructed with groups' values (``Settings(limits={"per_minute": {"moves": 5}})``) for the
    groups' fields it names, the environment for the rest."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid")

    redis: RedisSettings = RedisSettings()
    embedded: EmbeddedRedis = EmbeddedRedis()
    durability: Durability = Durability()
    http: HttpSettings = HttpSettings()
    proxies: Proxies = Proxies()
    streams: Streams = Streams()
    logs: Logs = Logs()
    metrics: MetricsSettings = MetricsSettings()
    clock: ClockSettings = ClockSettings()
    retention: Retention = Retention()
    limits: Limits = Limits()
    caps: Caps = Caps()
    play: Play = Play()
    solver: SolverSettings = Field(default_factory=SolverSettings)
    erasure: Erasure = Erasure()
    secrets: Secrets = Secrets()
    challenges: Challenges = Challenges()
    webhooks: Webhooks = Webhooks()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,  # noqa: ARG003 - pydantic-settings' signature
        dotenv_settings: PydanticBaseSettingsSource,  # noqa: ARG003
        file_secret_settings: PydanticBaseSettingsSource,  # noqa: ARG003
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The values given, then the environment's, each variable into its group (no ``.env``, no secrets dir)."""
        return init_settings, environment.FlatEnvironment(settings_cls)

    @classmethod
    def from_env(cls) -> Settings:
        return cls()

    def but(self, **changes: Mapping[str, Any] | Group) -> Settings:
        """A copy with the groups' changes (``settings.but(limits={"per_minute": {"moves": 2}})``: only the fields
        named change), each group validated again; a name that is no setting is an error, not ignored."""
        update: dict[str, Group] = {}
        for name, value in changes.items():
            current = getattr(self, name, None) if name in type(self).model_fields else None
            if not isinstance(current, Group):
                raise TypeError(f"no group of settings {name!r}")
            update[name] = value if isinstance(value, Group) else current.but(**value)
        return self.model_copy(update=update)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """As pydantic's, but a name that is no group is an error (pydantic would set it, and nothing would read
        it)."""
        unknown = set(update or {}) - set(type(self).model_fields)
        if unknown:
            raise TypeError(f"no group of settings {sorted(unknown)}; see Settings.but")
        return super().model_copy(update=update, deep=deep)


def setting_fields() -> dict[str, tuple[tuple[str, ...], FieldInfo]]:
    """Every setting by its environment variable: its place among the groups and its field."""
    return environment.fields_of(Settings)


def settings_errors(error: ValidationError) -> list[str]:
    """One line per bad setting, naming its variable (not the field) and, unless it is a secret, the value."""
    return environment.settings_errors(Settings, error)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """One line per ``PYRAMIDE_*`` variable that no setting reads, naming the closest known variable."""
    return environment.unknown_variables(Settings, environ)


def as_environment(changes: Mapping[str, Any]) -> dict[str, str]:
    """The environment variables that give the settings ``changes`` (by group, as ``Settings(**changes)``)."""
    return environment.as_environment(Settings, changes)
