"""CPU seconds of a process and every process below it, read from /proc, by kind of process.

A benchmark that asks what a piece of work costs the whole service cannot read the server process alone: its solver
pool's workers and the embedded Redis are processes of their own (children of `pyramide serve`), and callgrind or
``resource.getrusage`` see none of them. :func:`sample` reads ``utime + stime`` of the root and each descendant alive
(``/proc/<pid>/stat``), and the root's ``cutime + cstime`` (the CPU of its children it has waited for), so that a
worker that ended between two samples (a broken pool replaced) is still counted: :func:`spent` takes the difference
of two samples by kind.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class ProcessCpu:
    """One process as /proc shows it: its parent, its command name and line, its own CPU seconds (user and system)
    and those of its children it has reaped."""

    pid: int
    ppid: int
    name: str
    command: str
    cpu_s: float
    reaped_s: float


def read(pid: int) -> ProcessCpu:
    """``/proc/<pid>/stat`` and ``cmdline`` of one process; ``ProcessLookupError`` if it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        command = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (FileNotFoundError, ProcessLookupError):
        raise ProcessLookupError(pid) from None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]  # the name may hold spaces and parentheses
    fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is the state, the third field of the line
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return ProcessCpu(pid, int(fields[1]), name, command, (utime + stime) / TICKS, (cutime + cstime) / TICKS)


def _parents() -> dict[int, int]:
    """Every process's parent, from one pass over /proc."""
    parents = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return parents


def sample(root: int) -> dict[int, ProcessCpu]:
    """``root`` and every process below it alive now, by pid (``root`` must be alive)."""
    parents = _parents()
    family, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in family]
        family.update(children)
        frontier += children
    found = {}
    for pid in sorted(family):
        try:
            found[pid] = read(pid)
        except ProcessLookupError:
            if pid == root:
                raise
    return found


def each(before: dict[int, ProcessCpu], after: dict[int, ProcessCpu]) -> dict[int, float]:
    """CPU seconds each process alive at ``after`` spent since ``before`` (one born in between: since it began)."""
    return {
        pid: now.cpu_s - (was.cpu_s if (was := before.get(pid)) is not None and was.name == now.name else 0.0)
        for pid, now in after.items()
    }


def spent(
    before: dict[int, ProcessCpu], after: dict[int, ProcessCpu], root: int, kind_of: Callable[[ProcessCpu], str]
) -> dict[str, float]:
    """CPU seconds spent between two samples of ``root``'s family, by ``kind_of`` each process. A process born in
    between counts from zero; one that ended in between and that ``root`` reaped counts to its end, under the kind
    of the processes that ended (``"ended"`` if they were of several kinds). What a grandchild reaped by a child
    leaves behind is in that child's own reaped time, which is not counted (none of the service's children forks)."""
    by_kind: dict[str, float] = defaultdict(float)
    for pid, seconds in each(before, after).items():
        by_kind[kind_of(after[pid])] += seconds
    ended = [was for pid, was in before.items() if pid not in after and was.ppid == root]
    reaped = after[root].reaped_s - before[root].reaped_s - sum(was.cpu_s for was in ended)
    if reaped > 0 or ended:
        kinds = {kind_of(was) for was in ended}
        by_kind[kinds.pop() if len(kinds) == 1 else "ended"] += max(0.0, reaped)
    return dict(by_kind)


class Kind:
    """Names the kind of a process of `pyramide serve`'s family: ``server`` (the root), ``solver`` (a worker of its
    solver pool, started by ``multiprocessing``'s spawn), ``redis`` (the embedded Redis), ``other`` (the rest, such
    as ``multiprocessing``'s resource tracker)."""

    def __init__(self, root: int) -> None:
        self.root = root

    def __call__(self, process: ProcessCpu) -> str:
        if process.pid == self.root:
            return "server"
        if "redis-server" in process.name:
            return "redis"
        if "multiprocessing.spawn" in process.command:
            return "solver"
        return "other"
