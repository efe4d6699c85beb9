"""The settings' environment variables: each setting reads one (``PYRAMIDE_LIMIT_MOVES`` into ``limits.per_minute
.moves``, named by :meth:`Group.variable`), a ``PYRAMIDE_*`` one that no setting reads is a mistake worth stopping
for, and an error names the variable, never the field."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import PydanticBaseSettingsSource

from pyramide.service.infra.settings.group import Group

PREFIX = "PYRAMIDE_"
NOT_SETTINGS = frozenset({"PYRAMIDE_SCREENSHOT"})
"""``PYRAMIDE_*`` variables of the project's tools that the service ignores: the tests' "refresh the docs'
screenshots" (``docs/web.md``)."""

Where = tuple[str, ...]
"""A setting's place among the groups: ``("limits", "per_minute", "moves")``."""


def _leaves(model: type[BaseModel], where: Where = ()) -> Iterator[tuple[str, Where, FieldInfo]]:
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, Group):
            yield from _leaves(kind, (*where, name))
        elif issubclass(model, Group):
            yield model.variable(name), (*where, name), info


@cache
def fields_of(model: type[BaseModel]) -> dict[str, tuple[Where, FieldInfo]]:
    """Every setting of ``model`` by its environment variable: its place and its field."""
    found: dict[str, tuple[Where, FieldInfo]] = {}
    for variable, where, info in _leaves(model):
        if variable in found:
            raise TypeError(f"{variable} is read by two settings: {found[variable][0]} and {where}")
        found[variable] = (where, info)
    return found


class FlatEnvironment(PydanticBaseSettingsSource):
    """The values of the settings whose variables are set, each put in its place among the groups, as the
    variable's text (the fields' validators read it as they read any other value). Names compare regardless of
    case, as pydantic-settings' own environment source does."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:  # noqa: ARG002
        return None, field_name, False  # every value comes from __call__, by variable not by field

    def __call__(self) -> dict[str, Any]:
        environ = {name.upper(): value for name, value in os.environ.items()}
        values: dict[str, Any] = {}
        for variable, (where, _) in fields_of(self.settings_cls).items():
            if variable in environ:
                place = values
                for name in where[:-1]:
                    place = place.setdefault(name, {})
                place[where[-1]] = environ[variable]
        return values


def unknown_variables(model: type[BaseModel], environ: Mapping[str, str]) -> list[str]:
    """One line per ``PYRAMIDE_*`` variable of ``environ`` that no setting of ``model`` reads (a misspelling would
    otherwise leave its setting at its default, silently), naming the closest known one."""
    known = fields_of(model)
    lines = []
    for name in sorted(environ):
        upper = name.upper()
        if upper.startswith(PREFIX) and upper not in known and upper not in NOT_SETTINGS:
            close = difflib.get_close_matches(upper, known, n=1)
            lines.append(f"{name}: no such setting" + (f" (did you mean {close[0]}?)" if close else ""))
    return lines


def settings_errors(model: type[BaseModel], error: ValidationError) -> list[str]:
    """One line per bad setting, naming its variable and, unless it is a secret (a field not in the repr), the
    value."""
    places = {where: (variable, info) for variable, (where, info) in fields_of(model).items()}
    lines = []
    for entry in error.errors():
        message = str(entry["msg"]).removeprefix("Value error, ")
        loc = tuple(str(part) for part in entry["loc"])
        found = next((places[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in places), None)
        if found is None:  # a check of a whole group, whose message names its variables
            lines.append(message)
            continue
        variable, info = found
        value = str(entry["input"])
        shown = "" if info.repr is False or value in message else f" (got {value[:80]!r})"
        lines.append(f"{variable}: {message}{shown}")
    return list(dict.fromkeys(lines))


def as_environment(model: type[BaseModel], changes: Mapping[str, Any]) -> dict[str, str]:
    """The environment variables that give the settings ``changes`` (by group, as ``Settings(**changes)`` takes
    them): for a `pyramide serve` started with them."""
    places = {where: variable for variable, (where, _) in fields_of(model).items()}
    found: dict[str, str] = {}

    def walk(where: Where, value: Any) -> None:
        if isinstance(value, Mapping):
            for name, inner in value.items():
                walk((*where, str(name)), inner)
        elif isinstance(value, bool):
            found[places[where]] = "true" if value else "false"
        elif isinstance(value, tuple | list):
            found[places[where]] = ",".join(map(str, value))
        else:
            found[places[where]] = str(value)

    walk((), changes)
    return found
