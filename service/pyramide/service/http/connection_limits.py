"""What one connection and one process may take (``HttpLimits``, the settings of the same names), how many
connections a process can keep open within its file limit, and how many of them its live streams may hold."""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Any, Final

from pyramide.service.infra.settings import HttpSettings

_RESERVED_FDS: Final = 64
"""File descriptors kept for everything but client connections: Redis, the solver's pipes, logs, the listener."""


def _default(name: str) -> Any:
    return HttpSettings.model_fields[name].default


@dataclass(frozen=True)
class HttpLimits:
    """What a connection may take: its request headers' time and size, its body's time, and how many connections
    a process keeps open (the settings of the same names; ``docs/security.md``, Request limits)."""

    header_timeout_s: float = _default("header_timeout_s")
    body_timeout_s: float = _default("body_timeout_s")
    max_header_bytes: int = _default("max_header_bytes")
    max_connections: int = _default("max_connections")
    write_timeout_s: float = _default("write_timeout_s")

    @classmethod
    def of(cls, settings: HttpSettings) -> HttpLimits:
        return cls(
            settings.header_timeout_s,
            settings.body_timeout_s,
            settings.max_header_bytes,
            settings.max_connections,
            settings.write_timeout_s,
        )


def connection_bounds(max_connections: int) -> tuple[int, int]:
    """The connections a process keeps open and its listen backlog, both within its file limit. asyncio accepts
    up to ``backlog`` connections at a time before any of them is seen, and when ``accept`` fails for lack of
    descriptors it stops accepting for a whole second: so the open connections, one backlog and a reserve must fit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    backlog = max(16, min(2048, files // 8))
    return max(16, min(max_connections, files - backlog - _RESERVED_FDS)), backlog


def streams_per_process(settings: HttpSettings) -> int:
    """The live streams a process keeps open: their share of ``max_connections`` (``HttpSettings.stream_share``),
    scaled down as the file limit scales the connections down, so the API keeps the same part of what is left."""
    kept = connection_bounds(settings.max_connections)[0]
    return max(1, kept * settings.stream_share // settings.max_connections)
