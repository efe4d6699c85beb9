"""The service's own use of Redis's memory: the reserve kept for moderation and erasure (``infra/reserve.py``)."""

from __future__ import annotations

from typing import Final

MEMORY_RESERVE: Final = "pyr:memory-reserve"
"""A string of the reserve's size, which no ordinary write touches; deleted when a moderator's or an erasure's write
meets a full Redis, taken again once there is room."""
