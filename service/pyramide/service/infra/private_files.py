"""Files only the service's user may read: the embedded Redis's data directory (mode 0700) and every file in it and
every backup (0600). They hold every player's data and, unless the operator gives them (``docs/security.md``,
"Secrets at rest"), the certificate signing key and the deal secret.

Redis creates its own files (the append-only file, its rewrites, an RDB, its log and pid file) with the mode its
umask allows, so the embedded Redis runs with :data:`UMASK`; a directory or file left looser by an older version, a
restore or a copy by hand is tightened when the embedded Redis starts on it, and the log says what was changed."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("pyramide.supervisor")
UMASK = 0o077
"""The embedded Redis's and ``redis-cli``'s umask: what they create, no one but the service's user reads."""
DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077
"""The group's and everyone else's permission bits."""


def private_opener(path: str, flags: int) -> int:
    """``open(..., opener=private_opener)``: a file that did not exist is created with mode 0600."""
    return os.open(path, flags, FILE_MODE)


def keep_private(data_dir: Path) -> list[str]:
    """Make ``data_dir`` (created if need be) and every directory and regular file in it readable and writable by the
    owner alone, and log a warning naming each one that was looser; what was changed, as ``name 0644 -> 0600``."""
    data_dir.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    changed = _tighten(data_dir, str(data_dir))
    for entry in sorted(data_dir.rglob("*")):  # Redis 7 keeps its append-only file as the files of appendonlydir/
        if (entry.is_file() or entry.is_dir()) and not entry.is_symlink():
            changed += _tighten(entry, str(entry.relative_to(data_dir)))
    if changed:
        log.warning(
            "tightened the modes of the data directory %s to owner-only (%s): it holds every player's data and may"
            " hold the signing key",
            data_dir,
            ", ".join(changed),
        )
    return changed


def _tighten(path: Path, name: str) -> list[str]:
    """Drop the group's and others' bits of ``path``; ``["name 0755 -> 0700"]`` if there were any."""
    try:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if not mode & _OTHERS:
            return []
        path.chmod(mode & ~_OTHERS)
    except FileNotFoundError:  # gone meanwhile (a pid file or a rewrite's temporary file)
        return []
    except OSError as error:  # not its owner (a volume mounted as another user's): said, but no reason to stop
        log.warning("cannot make %s owner-only (%s): anyone who may enter it may read it", path, error.strerror)
        return []
    return [f"{name} {mode:04o} -> {mode & ~_OTHERS:04o}"]
