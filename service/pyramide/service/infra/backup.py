"""Backing up and restoring the embedded Redis's data directory.

``pyramide backup FILE [--data-dir DIR]`` writes a consistent snapshot (an RDB file) of everything the service keeps.
It works while `pyramide serve` runs, without touching its files: ``redis-cli --rdb`` asks the running server for a
snapshot as a replica would. When nothing runs on the directory, a server is started on it for the copy (its
append-only file replayed) and stopped after.

``pyramide restore FILE [--data-dir DIR]`` makes a data directory from such a snapshot: a server loads the snapshot,
rewrites it as its append-only file (what `pyramide serve` reads), and stops. The directory must not be in use and
must hold no data yet, so that a restore never overwrites live data by mistake.

A snapshot holds every player's data (and the signing key and deal secret when they are kept in Redis): it is written
with mode 0600, and the restored directory is 0700 with its append-only file 0600 (``private_files``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.disk import APPEND_ONLY_DIR, APPEND_ONLY_FILE, append_only_bytes
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.private_files import UMASK, keep_private, private_opener
from pyramide.service.infra.supervisor import RedisSupervisor


class BackupError(RuntimeError):
    """The backup or restore could not be done; the message says why."""


def backup(data_dir: Path, target: Path, server_binary: Path | None = None) -> int:
    """Write a snapshot of ``data_dir``'s data to ``target``; how many keys it holds. ``server_binary``: the
    ``redis-server`` of `pyramide serve` (``PYRAMIDE_REDIS_SERVER``), whose ``redis-cli`` takes the snapshot."""
    server = EmbeddedRedis(data_dir, server=server_binary)
    if _answers(server):
        return _snapshot(server, target)
    if not (data_dir / APPEND_ONLY_FILE).exists() and not (data_dir / APPEND_ONLY_DIR).exists():
        raise BackupError(f"{data_dir} holds no data to back up")
    supervisor = RedisSupervisor(data_dir, server=server_binary)
    supervisor.start()  # owns the directory for the copy, so no `pyramide serve` starts on it meanwhile
    try:
        return _snapshot(supervisor.redis, target)
    finally:
        supervisor.stop()


def restore(source: Path, data_dir: Path, server_binary: Path | None = None) -> int:
    """Make ``data_dir`` hold the data of the snapshot ``source``; how many keys it holds. The append-only file is
    written by ``server_binary`` (as :func:`backup`), in the layout of its version, which `pyramide serve` reads."""
    if not source.is_file():
        raise BackupError(f"no snapshot at {source}")
    if append_only_bytes(data_dir) > 0:
        raise BackupError(f"{data_dir} already holds data; restore into a new directory")
    keep_private(data_dir)
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copyfile(source, Path(scratch) / "dump.rdb")
        server = EmbeddedRedis(scratch, appendonly=False, server=server_binary)
        server.start()
        try:
            client = redis.Redis(unix_socket_path=str(server.socket))
            keys = int(client.dbsize())
            client.config_set("appendonly", "yes")  # writes the whole data set as an append-only file
            _wait_for_rewrite(client)
            client.close()
        finally:
            server.stop()
        _copy_private(Path(scratch), data_dir)
    keep_private(data_dir)  # an empty append-only file that was there keeps its mode through the copy
    return keys


def _copy_private(scratch: Path, data_dir: Path) -> None:
    """The append-only file the server in ``scratch`` wrote (6.2: one file; 7: a directory of them) into
    ``data_dir``, every file created with mode 0600."""
    files = [scratch / APPEND_ONLY_FILE] if (scratch / APPEND_ONLY_FILE).exists() else []
    files += sorted((scratch / APPEND_ONLY_DIR).glob("*"))
    for path in files:
        copy = data_dir / path.relative_to(scratch)
        copy.parent.mkdir(mode=0o700, exist_ok=True)
        with path.open("rb") as rewritten, open(copy, "wb", opener=private_opener) as out:
            shutil.copyfileobj(rewritten, out)


def _answers(server: EmbeddedRedis) -> bool:
    if not server.socket.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(server.socket), socket_timeout=2).ping())
    except redis.RedisError:
        return False


def _snapshot(server: EmbeddedRedis, target: Path) -> int:
    """``redis-cli --rdb`` into a new file of mode 0600 beside ``target``, which then replaces ``target`` whole: the
    snapshot is never readable by others, and a failed one leaves an earlier backup at ``target`` as it was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(descriptor)
    partial = Path(name)
    try:
        done = subprocess.run(
            [str(server.cli), "-s", str(server.socket), "--rdb", str(partial)],
            capture_output=True,
            text=True,
            check=False,
            umask=UMASK,
        )
        if done.returncode != 0:
            raise BackupError(f"redis-cli --rdb failed: {done.stderr.strip() or done.stdout.strip()}")
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return int(redis.Redis(unix_socket_path=str(server.socket)).dbsize())


def _wait_for_rewrite(client: redis.Redis, seconds: float = 60) -> None:
    machine = SystemClock()  # waits on a real Redis's rewrite: the machine's time, whatever the service runs on
    deadline = machine.monotonic() + seconds
    while machine.monotonic() < deadline:
        info = client.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"] and info["aof_enabled"]:
            return
        time.sleep(0.05)
    raise BackupError("the append-only file was not written in time")
