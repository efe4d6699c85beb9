"""The CPU budget `pyramide serve` sizes itself by: cgroup v2's ``cpu.max`` (and v1's ``cpu.cfs_quota_us``) read from
files with the contents the kernel writes, the tightest quota over the process's cgroup and its parents, the affinity as
the scheduler reports it, and the HTTP workers and solver pools it decides from them (issue 56: 64 workers of 64 solver
processes each on a 64-core node, whatever the pod's CPU limit)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from pyramide.service.infra.cpus import (
    CpuBudget,
    cgroup_quota,
    cgroup_quota_above,
    cgroup_v1_quota,
    cpu_budget,
    solver_workers,
)
from pyramide.service.infra.settings import Settings
from pyramide.service.serve import sized


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="ascii")
    return path


@pytest.mark.parametrize(
    ("contents", "cpus"),
    [
        ("max 100000\n", None),  # no quota: what a container without --cpus has
        ("200000 100000\n", 2.0),
        ("50000 100000\n", 0.5),
        ("150000 100000\n", 1.5),  # docker run --cpus 1.5
        ("max\n", None),
        ("\n", None),
        ("many 100000\n", None),
        ("100000 0\n", None),
    ],
)
def test_a_cpu_max_file_gives_its_quota_in_cpus(tmp_path: Path, contents: str, cpus: float | None) -> None:
    assert cgroup_quota(_write(tmp_path / "cpu.max", contents)) == cpus


def test_a_missing_cpu_max_is_no_quota(tmp_path: Path) -> None:
    """cgroup v1, the root cgroup (which has no ``cpu.max``), no cgroup file system at all."""
    assert cgroup_quota(tmp_path / "cpu.max") is None
    assert cgroup_quota(tmp_path) is None  # a directory where the file should be: unreadable, no quota


def test_the_tightest_quota_over_the_process_counts_its_parents_too(tmp_path: Path) -> None:
    """A Kubernetes pod's limit sits on the pod's cgroup; systemd's ``CPUQuota=`` on a slice above the process."""
    root = tmp_path / "cgroup"
    _write(root / "kubepods.slice" / "cpu.max", "400000 100000\n")
    _write(root / "kubepods.slice" / "pod-a" / "cpu.max", "150000 100000\n")
    _write(root / "kubepods.slice" / "pod-a" / "container" / "cpu.max", "max 100000\n")
    own = _write(tmp_path / "self-cgroup", "0::/kubepods.slice/pod-a/container\n")
    assert cgroup_quota_above(root, own) == 1.5


def test_in_its_own_cgroup_namespace_a_container_reads_the_root_file(tmp_path: Path) -> None:
    """Docker on cgroup v2 gives a container its own namespace: ``0::/``, its cgroup mounted as the root."""
    root = tmp_path / "cgroup"
    _write(root / "cpu.max", "50000 100000\n")
    assert cgroup_quota_above(root, _write(tmp_path / "self-cgroup", "0::/\n")) == 0.5


def test_cgroup_v1_without_a_quota_or_no_proc_file_is_no_quota(tmp_path: Path) -> None:
    """A host with cgroup v1 only lists no ``0::`` line; ``-1`` is v1's "no quota"; a missing
    ``/proc/self/cgroup`` reads the root alone."""
    root = tmp_path / "cgroup"
    _write(root / "cpu,cpuacct" / "user.slice" / "cpu.cfs_quota_us", "-1\n")
    _write(root / "cpu,cpuacct" / "user.slice" / "cpu.cfs_period_us", "100000\n")
    v1 = _write(tmp_path / "self-cgroup", "4:memory:/user.slice\n1:cpu,cpuacct:/user.slice\n")
    assert cgroup_quota_above(root, v1) is None
    assert cgroup_quota_above(root, tmp_path / "missing") is None


def _v1_quota(directory: Path, quota: str, period: str = "100000\n") -> None:
    _write(directory / "cpu.cfs_quota_us", quota)
    _write(directory / "cpu.cfs_period_us", period)


def test_a_cgroup_v1_quota_counts_with_its_parents(tmp_path: Path) -> None:
    """An older host (cgroup v1): ``docker run --cpus 1.5`` writes 150000 over 100000 in the container's cgroup of
    the ``cpu,cpuacct`` controller; a tighter limit on a parent holds too."""
    root = tmp_path / "cgroup"
    _v1_quota(root / "cpu,cpuacct" / "docker" / "abc", "150000\n")
    own = _write(tmp_path / "self-cgroup", "5:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    assert cgroup_quota_above(root, own) == 1.5
    _v1_quota(root / "cpu,cpuacct" / "docker", "50000\n")
    assert cgroup_quota_above(root, own) == 0.5


def test_in_a_v1_container_the_mount_s_root_is_its_own_cgroup(tmp_path: Path) -> None:
    """Docker on cgroup v1 mounts the container's cgroup as the controller's root while ``/proc/self/cgroup`` still
    names the host's path: the root's files count."""
    root = tmp_path / "cgroup"
    _v1_quota(root / "cpu,cpuacct", "200000\n")
    own = _write(tmp_path / "self-cgroup", "3:cpu,cpuacct:/docker/abc\n")
    assert cgroup_quota_above(root, own) == 2.0
    assert cpu_budget(root, own).quota == 2.0


@pytest.mark.parametrize(("quota", "period"), [("-1\n", "100000\n"), ("x\n", "100000\n"), ("100000\n", "0\n")])
def test_a_v1_file_without_a_usable_quota_is_none(tmp_path: Path, quota: str, period: str) -> None:
    _v1_quota(tmp_path, quota, period)
    assert cgroup_v1_quota(tmp_path) is None
    assert cgroup_v1_quota(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("affinity", "quota", "cpus"),
    [(4, None, 4), (4, 0.5, 1), (4, 1.5, 2), (2, 8.0, 2), (64, 4.0, 4), (1, None, 1), (0, None, 1)],
)
def test_the_budget_is_the_quota_rounded_up_within_the_affinity(affinity: int, quota: float | None, cpus: int) -> None:
    assert CpuBudget(affinity, quota).cpus == cpus


def test_the_affinity_is_the_scheduler_s(tmp_path: Path) -> None:
    budget = cpu_budget(tmp_path, tmp_path / "missing")
    assert budget == CpuBudget(len(os.sched_getaffinity(0)), None)


@pytest.mark.parametrize(
    ("cpus", "http_workers", "each", "total"),
    [(1, 1, 1, 2), (2, 1, 1, 2), (8, 1, 7, 8), (64, 8, 7, 64), (64, 16, 3, 64), (64, 32, 1, 64), (64, 64, 1, 128)],
)
def test_the_solver_processes_share_the_budget(cpus: int, http_workers: int, each: int, total: int) -> None:
    """Each HTTP worker's pool: its share of the budget, one of which serves players only, at least one for every
    search; so one `pyramide serve` runs the budget's count in all while every worker's share is 2 or more."""
    assert solver_workers(cpus, http_workers) == each
    assert http_workers * (each + 1) == total


def test_auto_on_a_64_core_node_with_a_4_cpu_limit_starts_4_workers_with_8_solver_processes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The finding, in figures: was 64 HTTP workers of 64 solver processes each; now the pod's limit decides, and
    one line at start says so."""
    monkeypatch.delenv("PYRAMIDE_SOLVER_WORKERS", raising=False)
    with caplog.at_level(logging.INFO, logger="pyramide.serve"):
        settings = sized(Settings(http={"workers": "auto"}), CpuBudget(64, 4.0))
    assert (settings.http.workers, settings.solver.workers) == (4, 1)
    [line] = [record for record in caplog.records if record.getMessage().startswith("CPU budget")]
    assert line.getMessage() == (
        "CPU budget 4 (affinity 64 CPUs, cgroup quota 4 CPUs): 4 HTTP workers, 2 solver processes each"
        " (1 for every search, 1 for players), 8 in all"
    )
    figures = vars(line)
    assert (figures["http_workers"], figures["solver_processes_per_worker"], figures["solver_processes"]) == (4, 2, 8)


def test_one_worker_takes_the_whole_budget_and_a_set_solver_size_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYRAMIDE_SOLVER_WORKERS", raising=False)
    one = sized(Settings(http={"workers": 1}), CpuBudget(8, None))
    assert (one.http.workers, one.solver.workers) == (1, 7)
    monkeypatch.setenv("PYRAMIDE_SOLVER_WORKERS", "3")
    kept = sized(Settings(http={"workers": "auto"}), CpuBudget(64, None))
    assert (kept.http.workers, kept.solver.workers) == (64, 3)
