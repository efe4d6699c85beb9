"""How a handler asks for a service: ``games: Injected[GameReading]`` names the dependency (see
:mod:`pyramide.service.services`). The value is the app's own object, so Litestar need not validate it."""

from __future__ import annotations

from typing import Annotated, TypeAlias, TypeVar

from litestar.di import Dependency
from litestar.params import SkipValidationMarker

T = TypeVar("T")

Injected: TypeAlias = Annotated[T, Dependency(kind="named"), SkipValidationMarker()]
