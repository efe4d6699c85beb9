"""The CPU budget: how many CPUs this process may keep busy, which `pyramide serve --workers auto` and the solver's
pools are sized from. ``os.cpu_count()`` counts the machine's cores; a container, a pod or ``taskset`` allows fewer
through the CPU affinity (the CPUs the scheduler runs the process on) and the cgroup quota (so much CPU time per
period, e.g. Kubernetes' CPU limit: cgroup v2's ``cpu.max``, or v1's ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``
on an older host). Reads files only, and imports nothing of the service, so
that the settings may use it."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
"""Where cgroup v2 is mounted; in a container with its own cgroup namespace this is the container's cgroup."""
OWN_CGROUP: Final = Path("/proc/self/cgroup")
"""The process's cgroups; cgroup v2's line is ``0::/its/path``, v1's for the CPU ``4:cpu,cpuacct:/its/path``."""
V1_CPU: Final = ("cpu", "cpu,cpuacct")
"""Where cgroup v1's CPU controller is mounted under :data:`CGROUP_ROOT` (``cpu`` is often a link to the other)."""


@dataclass(frozen=True, slots=True)
class CpuBudget:
    """The CPUs the affinity allows and the cgroup quota in CPUs (``None``: no quota anywhere above the process)."""

    affinity: int
    quota: float | None

    @property
    def cpus(self) -> int:
        """The whole CPUs to size by: the quota rounded up (1.5 CPUs keep two processes busy three quarters of the
        time each, where one would leave half a CPU unused), at most the affinity's count, at least one."""
        if self.quota is None:
            return max(1, self.affinity)
        return max(1, min(self.affinity, math.ceil(self.quota)))


def cgroup_quota(cpu_max: Path) -> float | None:
    """The CPUs a cgroup v2 ``cpu.max`` file allows: its quota over its period (``"150000 100000"``: 1.5 CPUs).
    ``None`` for no quota: ``"max 100000"``, a missing or unreadable file (cgroup v1, no cgroup file system, the root
    cgroup, which has none) or contents that are not two positive numbers."""
    try:
        fields = cpu_max.read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) != 2 or not fields[0].isdigit() or not fields[1].isdigit():  # "max 100000" among them
        return None
    quota, period = int(fields[0]), int(fields[1])
    return quota / period if quota > 0 and period > 0 else None


def cgroup_v1_quota(directory: Path) -> float | None:
    """The CPUs a cgroup v1 directory allows: ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us`` (``150000`` over
    ``100000``: 1.5 CPUs). ``None`` for no quota (``-1``), missing or unreadable files, or contents not numbers."""
    try:
        quota = int((directory / "cpu.cfs_quota_us").read_text(encoding="ascii"))
        period = int((directory / "cpu.cfs_period_us").read_text(encoding="ascii"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def _own_cgroups(own: Path) -> tuple[Path, Path]:
    """The process's cgroup v2 path and its cgroup v1 CPU controller's path (each ``/`` when it cannot tell: inside
    its own namespace, or no such line)."""
    try:
        lines = own.read_text(encoding="utf-8").splitlines()
    except OSError:
        return Path("/"), Path("/")
    v2 = next((Path(line[3:]) for line in lines if line.startswith("0::/")), Path("/"))
    fields = [line.split(":", 2) for line in lines]
    v1 = next((Path(f[2]) for f in fields if len(f) == 3 and "cpu" in f[1].split(",") and f[2][:1] == "/"), None)
    return v2, v1 or Path("/")


def _up_from(place: Path) -> tuple[Path, ...]:
    """A cgroup and its ancestors, as paths relative to the hierarchy's root."""
    return tuple(cgroup.relative_to("/") for cgroup in (place, *place.parents))


def cgroup_quota_above(root: Path = CGROUP_ROOT, own: Path = OWN_CGROUP) -> float | None:
    """The tightest cgroup quota over the process: its own cgroup's and every ancestor's up to ``root`` (a parent
    slice may hold the limit, as ``systemd-run -p CPUQuota=`` sets it on the unit), in cgroup v2's hierarchy and in
    v1's CPU controller. Where v1's mount shows the container's own cgroup as its root (Docker), the path
    ``/proc/self/cgroup`` names is not found under it, and the root's files are the container's."""
    v2, v1 = _own_cgroups(own)
    found = [cgroup_quota(root / cgroup / "cpu.max") for cgroup in _up_from(v2)]
    found += [cgroup_v1_quota(root / mount / cgroup) for mount in V1_CPU for cgroup in _up_from(v1)]
    return min((quota for quota in found if quota is not None), default=None)


def affinity() -> int:
    """The CPUs the scheduler may run this process on (``taskset``, a container's ``--cpuset-cpus``)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - Linux has it; this is for a developer's other system


def cpu_budget(root: Path = CGROUP_ROOT, own: Path = OWN_CGROUP) -> CpuBudget:
    """This process's CPU budget, read now (children inherit both the affinity and the cgroup)."""
    return CpuBudget(affinity(), cgroup_quota_above(root, own))


def solver_workers(cpus: int, http_workers: int) -> int:
    """How many processes each HTTP worker's solver pool runs for every search, by default: one `pyramide serve`
    then runs about one solver process per CPU of its budget in all. Each HTTP worker gets its share of the budget,
    one process of which is the pool's extra one for players' searches, and at least one for every search; so the
    total is ``http_workers * max(2, cpus // http_workers)`` (``cpus`` for up to half as many HTTP workers as
    CPUs, twice the HTTP workers beyond)."""
    return max(1, cpus // max(1, http_workers) - 1)
