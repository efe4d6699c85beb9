"""Processes: whether one is still alive, and child processes that never outlive the service: on Linux, a child
asks the kernel for a signal when its parent dies (``PR_SET_PDEATHSIG``), whatever kills the parent, SIGKILL
included, and exits at once if the parent is already gone by the time it asks. Elsewhere these are no-ops."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from multiprocessing import resource_tracker
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _ask_for_signal(sig: int) -> None:
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)


def on_parent_death(parent: int, sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.Popen``: the child gets ``sig`` when ``parent`` dies."""

    def arrange() -> None:
        _ask_for_signal(sig)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return arrange


def die_with_parent() -> None:
    """A process pool's initializer: the worker ends with the process that started it."""
    parent = os.getppid()
    _ask_for_signal(signal.SIGTERM)
    if parent == 1 or os.getppid() != parent:
        os._exit(1)


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited: one that is gone, or a zombie (dead, not yet reaped), has.
    Without ``/proc`` (not Linux) only the kernel's answer to a signal 0 is known."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return not Path("/proc/self/stat").exists()  # gone since the signal, or no /proc at all
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in {"Z", "X"}


def end_resource_tracker() -> None:
    """Ends multiprocessing's resource tracker, if this process started it, and waits for it. The first process a
    process spawns (an HTTP worker, a solver worker) starts the tracker, a Python process that every spawned
    descendant shares and that ends once the last of them has closed its pipe: the starting process last, at its
    very exit, so it outlived `pyramide serve` (issue 56: 1 run in 3 with ``--workers 2``). Closing this process's end
    and waiting here also waits for every descendant still holding one (a solver worker ending with its HTTP
    worker). The standard library has no public way (``_stop``: tests/unit/service/test_pinned_internals.py)."""
    resource_tracker._resource_tracker._stop()  # type: ignore[attr-defined]
