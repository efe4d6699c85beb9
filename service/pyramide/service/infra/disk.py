"""Whether the disk under the embedded Redis's files is running low, checked a few times a second.

Confirming every write on disk costs a Redis round trip per write request (``http/durability.py``). It is only
needed where a write can fail for lack of space, so the service confirms while the free space of the data
directory's file system is below a reserve: ``PYRAMIDE_CONFIRM_WRITES_RESERVE_MB`` plus the size of the
append-only file (what a rewrite of it may need besides). A file system filling from above the reserve to full
between two checks (a quarter of a second) is the one case this does not see; ``PYRAMIDE_CONFIRM_WRITES=always``
closes it at the cost of the round trip.

Below a second, smaller reserve (``PYRAMIDE_DISK_RESERVE_MB``) the disk is *short*: the service then refuses every
write itself but moderation and erasure (``http/full.py``), so that those still find room for Redis's file, which
on a really full disk refuses every write, deletions included, until one reaches the file. Something else may still
fill the disk (another program): so while there is room the watch keeps a ballast file of half that reserve in the
data directory (:data:`BALLAST`), and deletes it once less than its size is free, which gives Redis room to write
its file again (it retries every second) for moderation and erasure, while ordinary writes stay refused. It is
written again once the disk has the reserve and the ballast free.
"""

from __future__ import annotations

import logging
import os
from contextlib import suppress
from pathlib import Path
from typing import Final

from pyramide.service.infra.private_files import private_opener

log = logging.getLogger("pyramide.service")
CHECK_INTERVAL_S: Final = 0.25
APPEND_ONLY_FILE: Final = "appendonly.aof"
"""Redis 6.2's append-only file, in the data directory."""
APPEND_ONLY_DIR: Final = "appendonlydir"
"""Redis 7's: a base file, the files appended since and their manifest, in this directory of the data directory."""
BALLAST: Final = "disk-reserve"
"""The ballast file in the data directory, given back to Redis when the disk is full."""


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
    the append-only file, or cannot be measured; ``short`` while it has less than ``short_bytes`` free."""

    def __init__(self, data_dir: Path, reserve_bytes: int, short_bytes: int = 0) -> None:
        self.data_dir = data_dir
        self.reserve_bytes = reserve_bytes
        self.short_bytes = short_bytes
        self.ballast_bytes = short_bytes // 2
        self.low = True
        self.short = False
        self._measured = False
        self.check()

    def check(self) -> bool:
        """Measure now; a file system that cannot be measured counts as low (confirming is the safe side), not as
        short (refusing writes on a guess is not)."""
        try:
            stats = os.statvfs(self.data_dir)
            free = stats.f_bavail * stats.f_frsize
            appended = append_only_bytes(self.data_dir)
        except OSError:
            low, short = True, False
        else:
            low, short = free < self.reserve_bytes + appended, free < self.short_bytes
            self._ballast(free)
        if low != self.low and (low or self._measured):  # nothing "is back" at the first measure
            log.warning("free disk space for Redis %s", "is low: writes are confirmed" if low else "is back")
        if short != self.short:
            state = "is short: only moderation and erasure may write" if short else "suffices for every write again"
            log.warning("free disk space for Redis %s", state)
        self.low, self.short, self._measured = low, short, True
        return low

    def _ballast(self, free: int) -> None:
        """Give the ballast back when less than its size is free; write it again once there is room for it beyond
        the reserve. Every process watches: the file appears whole (written aside, then renamed) or not at all."""
        if self.ballast_bytes <= 0:
            return
        path = self.data_dir / BALLAST
        if free < self.ballast_bytes:
            with suppress(FileNotFoundError):
                path.unlink()
                log.warning("the disk under Redis is full: its ballast (%d bytes) is given back", self.ballast_bytes)
        elif free >= self.short_bytes + self.ballast_bytes and not path.exists():
            aside = self.data_dir / f".{BALLAST}.{os.getpid()}"
            try:
                with open(aside, "wb", opener=private_opener) as out:  # the owner's alone, as every file there
                    os.posix_fallocate(out.fileno(), 0, self.ballast_bytes)
                aside.replace(path)
            except OSError as error:  # filled meanwhile: the next check tries again
                aside.unlink(missing_ok=True)
                log.warning("the disk ballast could not be written: %s", error)

    async def watch(self) -> None:
        """One check: a periodic job, every :data:`CHECK_INTERVAL_S`."""
        self.check()
