"""What every group of settings is: a frozen model whose fields each read one environment variable, named by the
group's prefix and the field (``PYRAMIDE_LIMIT_`` + ``moves``) unless the field's ``validation_alias`` names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict


class Group(BaseModel):
    """A part of the settings, for one concern; a service is given the groups it reads, not all of them."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    env_prefix: ClassVar[str] = "PYRAMIDE_"
    """What the variables of the group's fields begin with."""

    @classmethod
    def variable(cls, field: str) -> str:
        """The environment variable of ``field``: its alias (``REDIS_URL``), else prefix and name in capitals."""
        alias = cls.model_fields[field].validation_alias
        return alias if isinstance(alias, str) else f"{cls.env_prefix}{field.upper()}"

    @classmethod
    def groups(cls) -> dict[str, type[Group]]:
        """The fields that are groups themselves (``limits.per_minute``), by name."""
        found = {}
        for name, info in cls.model_fields.items():
            kind = info.annotation
            if isinstance(kind, type) and issubclass(kind, Group):
                found[name] = kind
        return found

    def but(self, **changes: Any) -> Self:
        """A copy with ``changes`` (a dict for a field that is a group changes only the fields it names), validated
        as the environment's values are."""
        values = self.model_dump()
        for name, value in changes.items():
            if name not in type(self).model_fields:
                raise TypeError(f"{type(self).__name__} has no setting {name!r}")
            current = getattr(self, name)
            values[name] = current.but(**value) if isinstance(current, Group) and isinstance(value, Mapping) else value
        return self.model_validate(values)
