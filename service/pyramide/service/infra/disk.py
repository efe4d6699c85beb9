"""Whether the disk under the embedded Redis's files is running low, checked a few times a second.

Confirming every write on disk costs a Redis round trip per write request (``http/durability.py``). It is only
needed where a write can fail for lack of space, so the service confirms while the free space of the data
directory's file system is below a reserve: ``PYRAMIDE_CONFIRM_WRITES_RESERVE_MB`` plus the size of the
append-only file (what a rewrite of it may need besides). A file system filling from above the reserve to full
between two checks (a quarter of a second) is the one case this does not see; ``PYRAMIDE_CONFIRM_WRITES=always``
closes it at the cost of the round trip.
"""

from __future__ import annotations

import logging
import os
from contextlib import suppress
from pathlib import Path
from typing import Final

log = logging.getLogger("pyramide.service")
CHECK_INTERVAL_S: Final = 0.25
APPEND_ONLY_FILE: Final = "appendonly.aof"
"""Redis 6.2's append-only file, in the data directory."""
APPEND_ONLY_DIR: Final = "appendonlydir"
"""Redis 7's: a base file, the files appended since and their manifest, in this directory of the data directory."""


def append_only_bytes(data_dir: Path) -> int:
    """The size of the append-only file, in either layout (0: none yet)."""
    files = [data_dir / APPEND_ONLY_FILE, *(data_dir / APPEND_ONLY_DIR).glob("*")]
    total = 0
    for path in files:
        with suppress(FileNotFoundError):  # not this layout, or a rewrite's file gone meanwhile
            total += path.stat().st_size
    return total


class DiskWatch:
    """``low`` is true while ``data_dir``'s file system has less than ``reserve_bytes`` free beyond the size of
    the append-only file, or cannot be measured."""

    def __init__(self, data_dir: Path, reserve_bytes: int) -> None:
        self.data_dir = data_dir
        self.reserve_bytes = reserve_bytes
        self.low = True
        self.check()

    def check(self) -> bool:
        """Measure now; a file system that cannot be measured counts as low (confirming is the safe side)."""
        try:
            stats = os.statvfs(self.data_dir)
            free = stats.f_bavail * stats.f_frsize
            appended = append_only_bytes(self.data_dir)
        except OSError:
            low = True
        else:
            low = free < self.reserve_bytes + appended
        if low != self.low:
            log.warning("free disk space for Redis %s", "is low: writes are confirmed" if low else "is back")
        self.low = low
        return low

    async def watch(self) -> None:
        """One check: a periodic job, every :data:`CHECK_INTERVAL_S`."""
        self.check()
