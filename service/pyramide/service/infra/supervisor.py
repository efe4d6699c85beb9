"""The embedded Redis of `pyramide serve`, supervised: one owner per data directory, a child that dies with its
parent, restarted when it dies.

- **One owner.** The data directory is locked (``flock`` on ``pyramide.lock``, which the kernel releases whatever ends
  the process). A second `pyramide serve` on a directory in use refuses to start (:class:`DataDirInUseError`).
- **No orphans.** Redis is started with a parent-death signal (``lifecycle.on_parent_death``), so it stops within
  moments of its parent, SIGKILL included. A Redis left over all the same (from a version without this, or a machine
  without ``prctl``) is found by its pid file and stopped with SIGTERM before a new one starts, so two servers
  never share one append-only file, and the socket is only removed once no server is using it.
- **Restarts.** A thread watches the child; when it dies it is started again on the same files (the append-only file
  is replayed). Each restart is logged and counted in the state file that every worker process reads for
  ``/health/live`` and ``/metrics``. After ``max_restarts`` failed tries in a row the state file says so and
  liveness turns 503, so an orchestrator restarts the whole service; without one, the supervisor never gives up:
  it keeps trying, the wait doubling up to ``MAX_RESTART_DELAY_S``, and once Redis is back (the disk has room
  again, the operator fixed its file) liveness is 200 again.
- **Its own I/O may fail.** A full disk refuses the state file and the log as it refuses Redis's: the thread
  catches every error of a turn, keeps watching, and writes the state file again on each turn until it takes it
  (the workers meanwhile read the last state written).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.lifecycle import process_alive
from pyramide.service.infra.private_files import keep_private, private_opener

log = logging.getLogger("pyramide.supervisor")
CHECK_INTERVAL_S = 0.2
LEFTOVER_STOP_S = 10.0
MAX_RESTART_DELAY_S = 10.0
"""The longest wait between two tries to bring Redis back: how soon after the cause is gone it is running again."""


class DataDirInUseError(RuntimeError):
    """Another live `pyramide serve` owns the data directory."""


@dataclass(frozen=True, slots=True)
class SupervisorState:
    """What the supervisor tells the workers, through a small JSON file."""

    restarts: int = 0
    failed: bool = False
    up: bool = True

    @classmethod
    def read(cls, path: Path | None) -> SupervisorState:
        if path is None:
            return cls()
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return cls()
        return cls(int(data.get("restarts", 0)), bool(data.get("failed", False)), bool(data.get("up", True)))

    def write(self, path: Path) -> None:
        """Replace the file whole (readers never see half of it); an error (a full disk) leaves the old one."""
        temporary = path.with_suffix(".tmp")
        try:
            with open(temporary, "w", opener=private_opener) as out:
                out.write(json.dumps({"restarts": self.restarts, "failed": self.failed, "up": self.up}))
            temporary.replace(path)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise


class RedisSupervisor:
    def __init__(
        self,
        data_dir: Path,
        *,
        maxmemory: str = "0",
        appendfsync: str = "everysec",
        max_restarts: int = 5,
        restart_delay_s: float = 0.5,
        server: Path | None = None,
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.redis = EmbeddedRedis(self.data_dir, maxmemory=maxmemory, appendfsync=appendfsync, server=server)
        self.max_restarts = max_restarts
        self.restart_delay_s = restart_delay_s
        self.state_file = self.data_dir / "supervisor.json"
        self._lock: IO[str] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._state = SupervisorState()
        self._published = True

    @property
    def url(self) -> str:
        return self.redis.url

    def start(self) -> RedisSupervisor:
        keep_private(self.data_dir)
        self._take_ownership()
        self._stop_leftover()
        self.redis.start()
        self._publish(SupervisorState())
        self._thread = threading.Thread(target=self._watch, name="redis-supervisor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching, then stop Redis (every acknowledged write is on disk), then give the directory up."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.redis.stop()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _take_ownership(self) -> None:
        lock = open(self.data_dir / "pyramide.lock", "a+", opener=private_opener)  # noqa: SIM115 - held as the lock
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            owner = lock.read().strip() or "?"
            lock.close()
            raise DataDirInUseError(
                f"the data directory {self.data_dir} is in use by another `pyramide serve` (pid {owner}); stop it"
                " or choose another --data-dir"
            ) from None
        with suppress(OSError):  # only says who owns it; a full disk must not stop the start
            lock.seek(0)
            lock.truncate()
            lock.write(str(os.getpid()))
            lock.flush()
        self._lock = lock

    def _stop_leftover(self) -> None:
        """A Redis still running on this directory from an earlier crash: stopped with SIGTERM (it writes its
        append-only file and removes its socket), SIGKILL only if it will not go."""
        pid = _leftover_pid(self.redis.pid_file)
        if pid is None:
            return
        log.warning("stopping a Redis (pid %d) left running on %s by an earlier crash", pid, self.data_dir)
        os.kill(pid, signal.SIGTERM)
        machine = SystemClock()  # waits on a real process: the machine's time, whatever the service runs on
        deadline = machine.monotonic() + LEFTOVER_STOP_S
        while process_alive(pid) and machine.monotonic() < deadline:
            time.sleep(0.05)
        if process_alive(pid):
            os.kill(pid, signal.SIGKILL)
            while process_alive(pid):
                time.sleep(0.05)

    def _watch(self) -> None:
        """Until stopped: bring Redis back whenever it is not running, and keep the state file current. No error
        ends this thread (it would leave Redis dead for good)."""
        failures = 0
        while not self._stopping.wait(self._pause(failures)):
            try:
                failures = self._turn(failures)
            except Exception:  # the watch must outlive anything one turn meets
                failures += 1
                with suppress(Exception):
                    log.exception("the Redis supervisor met an error; it goes on watching")

    def _pause(self, failures: int) -> float:
        """How long to wait before the next turn: short while all is well, doubling with each failed try."""
        if failures == 0:
            return CHECK_INTERVAL_S
        return min(self.restart_delay_s * (1 << min(failures - 1, 16)), MAX_RESTART_DELAY_S)

    def _turn(self, failures: int) -> int:
        """One look at Redis: restart it if it is not running; the failed tries in a row, after this one."""
        if not self._published:
            self._publish(self._state)
        if self.redis.running:
            return 0
        if failures == 0:
            log.error("the embedded Redis exited (code %s); restarting it on %s", self.redis.returncode, self.data_dir)
            self._publish(SupervisorState(self._state.restarts, failed=False, up=False))
        try:
            self.redis.start()
        except (RuntimeError, OSError) as error:
            failures += 1
            if failures == 1:  # once an outage, not once a try (issue 56); the back line counts the tries
                text = "restarting the embedded Redis failed: %s; trying again, at most every %.0f s"
                log.error(text, error, MAX_RESTART_DELAY_S)
            else:
                log.debug("restarting the embedded Redis failed (%d in a row): %s", failures, error)
            if failures == self.max_restarts:
                self._publish(SupervisorState(self._state.restarts, failed=True, up=False))
                log.critical(
                    "the embedded Redis cannot be brought back: /health/live now answers 503; still trying every"
                    " %.0f s at most",
                    MAX_RESTART_DELAY_S,
                )
            return failures
        self._publish(SupervisorState(self._state.restarts + 1, failed=False, up=True))
        log.warning("the embedded Redis is back (restart %d, after %d failed tries)", self._state.restarts, failures)
        return 0

    def _publish(self, state: SupervisorState) -> None:
        """Tell the workers; if the file cannot be written now, it is written on a later turn."""
        self._state = state
        try:
            state.write(self.state_file)
        except OSError as error:
            if self._published:
                with suppress(Exception):
                    log.error("cannot write %s (%s); trying again on each check", self.state_file, error)
            self._published = False
            return
        self._published = True


def _leftover_pid(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    if not process_alive(pid):
        return None
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if b"redis-server" in command else None
